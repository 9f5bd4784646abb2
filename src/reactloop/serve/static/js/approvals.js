// Tool calls waiting for approval: one card per call with Approve, Deny (with a reason the
// model reads) and Edit (the JSON arguments). Each decision keeps the call id and arguments hash
// the server sent, so it is refused if the call changed; once every card is decided, the
// decisions go to the server together and the run goes on.

import { h, pretty } from "./dom.js";

export class Approvals {
  constructor(root, follower, onDecide) {
    this.root = root;
    this.follower = follower;
    this.onDecide = onDecide; // async (decisions) => void
    this.box = null;
    this.decisions = new Map();
  }

  get open() {
    return this.box !== null;
  }

  reset() {
    this.box?.remove();
    this.box = null;
    this.decisions = new Map();
  }

  /** Show the calls of `pending` (the server's pending_approvals) as cards. */
  show(pending) {
    this.reset();
    if (!pending || !pending.length) return;
    this.pending = pending;
    const title = pending.length === 1 ? "A tool call needs your approval" : `${pending.length} tool calls need your approval`;
    this.box = h("section.approvals", { "aria-label": "Tool calls waiting for approval" }, h("div.approvals-head", { text: title }), pending.map((p) => this.card(p)));
    this.root.append(this.box);
    this.follower.jump();
  }

  card(p) {
    const args = h("pre.approval-args", { text: pretty(p.arguments) });
    const editor = h("textarea.approval-editor", { rows: 5, spellcheck: "false", "aria-label": `Arguments of ${p.tool_name} (JSON)`, hidden: true });
    editor.value = JSON.stringify(p.arguments, null, 2);
    const reason = h("input.approval-reason", { type: "text", placeholder: "Reason (the agent reads it if you deny)", "aria-label": "Reason for denying" });
    const problem = h("div.approval-problem", { role: "alert" });
    const status = h("div.approval-status");
    const approve = h("button.btn.primary.approve", { type: "button", text: "Approve" });
    const deny = h("button.btn.deny", { type: "button", text: "Deny" });
    const edit = h("button.btn.edit", { type: "button", text: "Edit" });
    const card = h(
      "div.approval",
      { dataset: { callId: p.call_id, tool: p.tool_name } },
      h("div.approval-title", {}, h("span.approval-icon", { text: "◷" }), h("code", { text: p.tool_name }), h("span.dim", { text: ` · ${p.call_id}` })),
      args,
      editor,
      reason,
      problem,
      h("div.approval-actions", {}, approve, deny, edit),
      status,
    );
    const base = { call_id: p.call_id, arguments_hash: p.arguments_hash };
    edit.addEventListener("click", () => {
      const editing = editor.hidden;
      editor.hidden = !editing;
      args.hidden = editing;
      edit.textContent = editing ? "Cancel edit" : "Edit";
      approve.textContent = editing ? "Approve with edits" : "Approve";
      problem.textContent = "";
      if (editing) editor.focus();
    });
    approve.addEventListener("click", () => {
      if (editor.hidden) return this.decide(card, { ...base, approved: true }, "approved");
      let edited;
      try {
        edited = JSON.parse(editor.value);
      } catch (e) {
        problem.textContent = `Not valid JSON: ${e.message}`;
        return;
      }
      if (edited === null || typeof edited !== "object" || Array.isArray(edited)) {
        problem.textContent = "The arguments must be a JSON object.";
        return;
      }
      this.decide(card, { ...base, approved: true, arguments: edited }, "edited");
    });
    deny.addEventListener("click", () => {
      const why = reason.value.trim();
      this.decide(card, { ...base, approved: false, ...(why ? { reason: why } : {}) }, "denied");
    });
    return card;
  }

  decide(card, decision, action) {
    this.decisions.set(decision.call_id, decision);
    card.dataset.decision = action;
    for (const el of card.querySelectorAll("button, input, textarea")) el.disabled = true;
    const args = card.querySelector(".approval-args");
    if (decision.arguments) args.textContent = JSON.stringify(decision.arguments, null, 2);
    args.hidden = false;
    card.querySelector(".approval-editor").hidden = true;
    card.querySelector(".approval-problem").textContent = "";
    card.querySelector(".approval-status").textContent = action === "denied" && decision.reason ? `denied: ${decision.reason}` : action;
    if (this.decisions.size < this.pending.length) return;
    const decisions = this.pending.map((p) => this.decisions.get(p.call_id));
    this.box.classList.add("sent");
    this.box = null; // the cards stay as a record; the run's events follow below them
    this.onDecide(decisions);
  }
}
