// Answers an MCP server's question (elicitation) through `reactloop serve`'s A2A endpoint with
// the official A2A JavaScript SDK (@a2a-js/sdk).
// usage: node elicit.mjs BASE_URL CONTEXT_ID TEXT ANSWER_JSON
// Sends TEXT (blocking): the task comes back input-required with the question; then sends
// ANSWER_JSON as a data part in the same task. Prints one JSON object: the state and message of
// the first task, then the state and answer of the second.

import { ClientFactory } from "@a2a-js/sdk/client";
import { Message, Task, taskStateToJSON } from "@a2a-js/sdk";

const [baseUrl, contextId, text, answerJson] = process.argv.slice(2);
const client = await new ClientFactory().createFromUrl(baseUrl);

function request(parts, taskId) {
  return {
    message: Message.fromJSON({
      messageId: `js-${Math.random().toString(36).slice(2)}`, contextId, role: "ROLE_USER", parts, ...(taskId ? { taskId } : {}),
    }),
  };
}

const asked = Task.toJSON(await client.sendMessage(request([{ text }])));
const answered = await client.sendMessage(request([{ data: JSON.parse(answerJson) }], asked.id));
const status = answered.status;
console.log(JSON.stringify({
  asked: { state: asked.status.state, parts: asked.status.message.parts },
  answered: { state: taskStateToJSON(status.state), text: status.message.parts.map((p) => p.content?.value).join("\n") },
}));
