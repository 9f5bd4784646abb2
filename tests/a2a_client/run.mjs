// Drives `reactloop serve`'s A2A endpoint with the official A2A JavaScript SDK (@a2a-js/sdk).
// usage: node run.mjs BASE_URL CONTEXT_ID
// Fetches the agent card, sends a message (blocking), streams a second one in the same context,
// then starts a slow one, cancels it and reads it back. Prints one JSON object (the SDK parses
// and validates every response itself; its own toJSON writes what is printed).

import { ClientFactory } from "@a2a-js/sdk/client";
import { AgentCard, Message, Task, taskStateToJSON } from "@a2a-js/sdk";

const [baseUrl, contextId] = process.argv.slice(2);
const client = await new ClientFactory().createFromUrl(baseUrl);
let n = 0;

function request(text) {
  n += 1;
  return {
    message: Message.fromJSON({
      messageId: `js-${n}-${Date.now()}`, contextId, role: "ROLE_USER", parts: [{ text }],
    }),
  };
}

const out = { card: AgentCard.toJSON(await client.getAgentCard()) };

const sent = await client.sendMessage(request("hello from js"));
out.sent = Task.toJSON(sent);

out.streamed = [];
for await (const event of client.sendMessageStream(request("streamed from js"))) {
  out.streamed.push(event.payload.$case);
  if (event.payload.$case === "statusUpdate") {
    const status = event.payload.value.status;
    out.streamedFinal = taskStateToJSON(status.state);
    if (status.message) {
      out.streamedAnswer = status.message.parts.map((p) => p.content?.value).join("\n");
    }
  }
}

// a slow task: cancel it once it works, then read it back
const slow = client.sendMessageStream(request("slow"));
let taskId;
for await (const event of slow) {
  if (event.payload.$case === "statusUpdate") {
    taskId = event.payload.value.taskId;
    break;
  }
}
const cancelled = await client.cancelTask({ id: taskId, tenant: "", metadata: undefined });
out.cancelled = taskStateToJSON(cancelled.status.state);
out.read = taskStateToJSON((await client.getTask({ id: taskId, tenant: "" })).status.state);

console.log(JSON.stringify(out));
