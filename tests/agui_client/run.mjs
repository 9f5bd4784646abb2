// Drives `reactloop serve`'s /api/agui with the official AG-UI client (@ag-ui/client).
// usage: node run.mjs URL THREAD_ID '["first message", {"resume": PAYLOAD}, ...]' [TOKEN]
// A string step sends a user message; {"resume": PAYLOAD} answers every interrupt the last run
// left open (the client's pendingInterrupts) with PAYLOAD. Prints one JSON line per run: the
// event types seen, CUSTOM events, the client's messages, state and pending interrupts after
// the run (the client validates the stream and builds these itself).

import { HttpAgent } from "@ag-ui/client";

const [url, threadId, textsJson, token] = process.argv.slice(2);
const agent = new HttpAgent({
  url,
  threadId,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
});

let n = 0;
for (const step of JSON.parse(textsJson)) {
  n += 1;
  const params = { runId: `run-${n}` };
  if (typeof step === "string") {
    agent.addMessage({ id: `user-${n}`, role: "user", content: step });
  } else {
    params.resume = agent.pendingInterrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: step.resume }));
  }
  const events = [];
  const custom = [];
  try {
    const result = await agent.runAgent(
      params,
      {
        onEvent({ event }) {
          events.push(event.type);
        },
        onCustomEvent({ event }) {
          custom.push({ name: event.name, value: event.value });
        },
      },
    );
    console.log(JSON.stringify({ events, custom, result: result.result, newMessages: result.newMessages, messages: agent.messages, state: agent.state, pendingInterrupts: agent.pendingInterrupts }));
  } catch (error) {
    console.log(JSON.stringify({ events, error: String((error && error.message) || error) }));
  }
}
