// The conversation: the user's messages, the agent's answers as they stream, and a compact
// line for the tools each step used. Answers are plain text (never parsed as HTML).

import { h, clear } from "./dom.js";
import { partView } from "./attach.js";

const STATE_NOTES = {
  max_iterations: "The agent ran out of iterations; this is its best answer so far.",
  waiting_for_user: "The agent is waiting for your answer.",
  waiting_for_approval: "The agent is waiting for your approval.",
  timed_out: "The run timed out.",
  cancelled: "The run was cancelled.",
  error: "The run failed.",
};

export class Chat {
  constructor(root, follower) {
    this.root = root;
    this.follower = follower;
    this.reset();
  }

  reset() {
    clear(this.root);
    this.bubble = null; // the answer being written
    this.text = null;
    this.lastText = "";
    this.typing = null;
  }

  empty(message) {
    this.root.append(h("div.empty", {}, h("div.empty-title", { text: "Ask the agent something" }), h("div.dim", { text: message })));
  }

  user(text, parts = []) {
    this.root.querySelector(".empty")?.remove();
    const bubble = h("div.bubble", { text });
    if (parts.length) bubble.append(h("div.parts", {}, parts.map(partView)));
    this.root.append(h("div.msg.user", {}, bubble));
    this.follower.jump();
  }

  waiting() {
    this.typing = h("div.msg.assistant.typing", {}, h("div.bubble", {}, h("span.dot"), h("span.dot"), h("span.dot")));
    this.root.append(this.typing);
    this.follower.poke();
  }

  stopWaiting() {
    this.typing?.remove();
    this.typing = null;
  }

  write(text) {
    if (!this.bubble) {
      this.stopWaiting();
      this.text = document.createTextNode("");
      this.bubble = h("div.msg.assistant", {}, h("div.bubble", {}, this.text));
      this.root.append(this.bubble);
    }
    this.text.appendData(text);
    this.follower.poke();
  }

  /** The text written so far was said on the way to tool calls: keep it as an aside. */
  toolsUsed(names) {
    if (this.bubble) {
      this.bubble.classList.add("interim");
      this.lastText = this.text.data;
    }
    this.bubble = null;
    if (names.length) {
      this.stopWaiting();
      this.activity(names);
      this.waiting();
    }
    this.follower.poke();
  }

  handle(type, data) {
    if (type === "text_delta") this.write(data.text);
    else if (type === "model_response") {
      const r = data.response || {};
      if (!this.bubble && r.text && !(r.tool_calls || []).length) this.write(r.text);
      if ((r.tool_calls || []).length) this.toolsUsed(r.tool_calls.map((c) => c.name));
    } else if (type === "run_end") this.finish(data.result || {});
    else if (type === "error") this.finish({ state: "error", output: data.error });
  }

  finish(result) {
    this.stopWaiting();
    const output = typeof result.output === "string" ? result.output : JSON.stringify(result.output);
    const written = this.bubble ? this.text.data : "";
    if (output && output.trim() !== written.trim()) {
      this.bubble = null;
      this.write(output);
    }
    if (this.bubble) {
      this.bubble.dataset.state = result.state;
      if (STATE_NOTES[result.state]) this.bubble.querySelector(".bubble").append(h("div.state-note", { text: STATE_NOTES[result.state] }));
    }
    this.bubble = null;
    this.follower.poke();
  }

  notice(text) {
    this.root.append(h("div.notice", { text }));
    this.follower.poke();
  }

  // history
  assistant(text) {
    this.bubble = null;
    this.write(text);
    this.bubble = null;
  }

  /** Tools used since the last answer, on one line. */
  activity(names) {
    let line = this.root.lastElementChild;
    if (!line || !line.classList.contains("activity")) {
      line = h("div.activity", {}, h("span.gear", { text: "⚙" }));
      this.root.append(line);
    }
    line.append(...names.map((n) => h("code", { text: n })));
  }
}
