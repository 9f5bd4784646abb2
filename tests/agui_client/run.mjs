// Drives `reactloop serve`'s /api/agui with the official AG-UI client (@ag-ui/client).
// usage: node run.mjs URL THREAD_ID '["first message", "second message"]' [TOKEN]
// Prints one JSON line per run: the event types seen, CUSTOM events, the client's messages
// and state after the run (the client validates the stream and builds these itself).

import { HttpAgent } from "@ag-ui/client";

const [url, threadId, textsJson, token] = process.argv.slice(2);
const agent = new HttpAgent({
  url,
  threadId,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
});

let n = 0;
for (const text of JSON.parse(textsJson)) {
  n += 1;
  agent.addMessage({ id: `user-${n}`, role: "user", content: text });
  const events = [];
  const custom = [];
  try {
    const result = await agent.runAgent(
      { runId: `run-${n}` },
      {
        onEvent({ event }) {
          events.push(event.type);
        },
        onCustomEvent({ event }) {
          custom.push({ name: event.name, value: event.value });
        },
      },
    );
    console.log(JSON.stringify({ events, custom, result: result.result, newMessages: result.newMessages, messages: agent.messages, state: agent.state }));
  } catch (error) {
    console.log(JSON.stringify({ events, error: String((error && error.message) || error) }));
  }
}
