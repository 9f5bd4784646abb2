// The run as it happens, iteration by iteration. Every event appends or updates a few nodes
// (never a re-render), so a run of hundreds of events stays smooth.

import { h, clear, pretty, short, duration, tokens } from "./dom.js";
import { partView } from "./attach.js";

const STATE_LABELS = {
  completed: "completed",
  max_iterations: "max iterations",
  waiting_for_user: "waiting for you",
  waiting_for_approval: "waiting for approval",
  timed_out: "timed out",
  cancelled: "cancelled",
  error: "error",
};
const STEP_MARKS = { pending: "○", in_progress: "◐", completed: "✓", failed: "✗", skipped: "–" };

function argsInline(args) {
  const parts = Object.entries(args || {}).map(([k, v]) => `${k}: ${JSON.stringify(v)}`);
  return short(parts.join(", "), 160);
}

function resultText(result) {
  if (result.error) return result.error;
  if (result.content) return result.content;
  return pretty(result.result);
}

export class Trace {
  constructor(root, planBox, follower) {
    this.root = root;
    this.planBox = planBox;
    this.follower = follower;
    this.reset();
  }

  reset() {
    clear(this.root);
    this.turn = null;
    this.iter = null;
    this.calls = new Map();
    this.subs = new Map(); // sub-runs (agents called as tools) by run id
    this.setPlan(null);
  }

  // -- turns and iterations ----------------------------------------------------------------
  startTurn(prompt, fromHistory = false, parts = []) {
    const state = h("span.badge.running", { text: fromHistory ? "from history" : "running" });
    if (fromHistory) state.className = "badge history";
    const body = h("div.turn-body");
    if (parts.length) body.append(h("div.parts", {}, parts.map(partView)));
    const node = h(
      "article.turn",
      {},
      h("header.turn-head", {}, h("span.turn-prompt", { text: short(prompt, 140), title: prompt }), state),
      body,
    );
    this.root.append(node);
    this.turn = { node, body, state, iterations: new Map(), started: performance.now() };
    this.iter = null;
    this.follower.poke();
    return this.turn;
  }

  iteration(k, max) {
    const turn = this.turn || this.startTurn("(run)");
    let it = turn.iterations.get(k);
    if (it) return it;
    const chips = h("span.chips");
    const body = h("div.iter-body");
    const node = h(
      "section.iter",
      { dataset: { iteration: k } },
      h("header.iter-head", {}, h("span.iter-no", {}, `Iteration ${k}`, max ? h("span.dim", { text: ` / ${max}` }) : null), chips),
      body,
    );
    turn.body.append(node);
    it = { k, node, body, chips, reply: null, requestAt: null };
    turn.iterations.set(k, it);
    this.iter = it;
    this.follower.poke();
    return it;
  }

  row(cls, ...children) {
    const target = this.iter ? this.iter.body : (this.turn || this.startTurn("(run)")).body;
    const node = h(`div.row.${cls}`, {}, ...children);
    target.append(node);
    this.follower.poke();
    return node;
  }

  // -- sub-runs: an agent called as a tool, nested under the call that started it ---------------
  subRun(type, data) {
    let box = this.subs.get(data.run_id);
    if (!box) {
      const parent = this.subs.get(data.parent_run_id);
      const host = parent ? parent.last : this.runningCall(data.agent);
      const state = h("span.badge.running", { text: "running" });
      const node = h("div.sub-run", { dataset: { agent: data.agent, runId: data.run_id } }, h("div.sub-head", {}, h("span.sub-agent", { text: data.agent }), state));
      (host ? host : this.row("call")).append(node);
      box = { node, state, calls: new Map(), last: null };
      this.subs.set(data.run_id, box);
    }
    if (type === "tool_call") {
      const c = data.call;
      const line = h("div.sub-call", { dataset: { tool: c.name, state: "running" } }, h("span.sub-call-name", { text: `→ ${c.name}(${argsInline(c.arguments)})` }), h("span.sub-call-result.dim"));
      box.node.append(line);
      box.calls.set(c.id, line);
      box.last = line;
    } else if (type === "tool_result" || type === "tool_error") {
      const line = box.calls.get(data.result.call_id);
      if (line) {
        line.dataset.state = type === "tool_error" ? "error" : "ok";
        line.querySelector(".sub-call-result").textContent = ` ↳ ${short(resultText(data.result), 160)}`;
      }
    } else if (type === "model_response") {
      const r = data.response || {};
      if (r.text && !(r.tool_calls || []).length) box.node.append(h("div.sub-reply", { text: short(r.text, 400) }));
    } else if (type === "run_end") {
      const state = (data.result || {}).state || "completed";
      box.node.dataset.state = state;
      box.state.className = `badge ${state}`;
      box.state.textContent = STATE_LABELS[state] || state;
    }
    this.follower.poke();
  }

  /** The agent call a new sub-run belongs to: the latest running call (of that agent's tool). */
  runningCall(agent) {
    const running = [...this.calls.values()].filter((c) => c.node.dataset.state === "running");
    const named = running.filter((c) => c.node.dataset.tool === agent);
    const found = (named.length ? named : running).at(-1);
    return found ? found.node : null;
  }

  // -- live events ---------------------------------------------------------------------------
  handle(type, data) {
    const method = this[`on_${type}`];
    if (method) method.call(this, data);
    else this.row("note", h("span.tag", { text: type }), h("span.dim", { text: short(pretty(data), 160) }));
  }

  on_run_start(data) {
    if (this.turn) this.turn.node.dataset.runId = data.run_id;
  }

  on_iteration_start(data) {
    this.iteration(data.iteration, data.max_iterations);
  }

  on_request(data) {
    const it = this.iteration(data.iteration);
    const t = data.tokens || {};
    const detail = ["system", "tools", "history", "notes"].map((k) => `${k} ${t[k] ?? 0}`).join(" · ");
    it.chips.append(h("span.chip.tokens", { title: `request tokens: ${detail}`, text: `${tokens(t.total)} tok` }));
    it.requestAt = performance.now();
  }

  on_text_delta(data) {
    const it = this.iteration(data.iteration);
    if (!it.reply) {
      it.text = document.createTextNode("");
      it.reply = this.row("reply", h("span.who", { text: "model" }), h("span.reply-text", {}, it.text));
      it.reply.classList.add("streaming");
    }
    it.text.appendData(data.text);
    this.follower.poke();
  }

  on_model_response(data) {
    const it = this.iteration(data.iteration);
    const r = data.response || {};
    if (!it.reply && r.text) this.on_text_delta({ iteration: data.iteration, text: r.text });
    if (it.reply) it.reply.classList.remove("streaming");
    if (it.requestAt !== null) {
      it.chips.append(h("span.chip.time", { title: "model call, as seen by this page", text: `model ${duration((performance.now() - it.requestAt) / 1000)}` }));
    }
    if (r.usage) {
      it.chips.append(h("span.chip.usage", { title: "tokens reported by the model", text: `in ${tokens(r.usage.input_tokens)} · out ${tokens(r.usage.output_tokens)}` }));
    }
    if (r.finish_reason === "length") it.chips.append(h("span.chip.warn", { text: "cut off" }));
  }

  on_tool_call(data) {
    this.iteration(data.iteration);
    this.addCall(data.call);
  }

  addCall(call) {
    const preview = h("div.call-preview.dim", { text: "running…" });
    const detail = h("pre.call-detail");
    detail.textContent = pretty(call.arguments);
    const meta = h("span.call-meta");
    const node = this.row(
      "call",
      h(
        "details",
        {},
        h("summary.call-line", {}, h("span.call-icon"), h("span.call-name", { text: call.name }), h("span.call-args", { text: `(${argsInline(call.arguments)})` }), meta),
        h("div.call-section", {}, h("div.label", { text: "arguments" }), detail),
      ),
      preview,
    );
    node.dataset.tool = call.name;
    node.dataset.state = "running";
    if (call.id) node.dataset.callId = call.id;
    this.calls.set(call.id, { node, preview, meta });
    return node;
  }

  on_tool_result(data) {
    this.finishCall(data.result, false);
  }

  on_tool_error(data) {
    this.finishCall(data.result, true);
  }

  finishCall(result, failed) {
    if (!this.calls.has(result.call_id)) this.addCall({ name: result.name, arguments: result.arguments, id: result.call_id });
    const found = this.calls.get(result.call_id);
    const { node } = found;
    node.dataset.state = failed ? "error" : "ok";
    const text = resultText(result);
    found.preview.textContent = `${failed ? "✗ " : "↳ "}${short(text, 200)}`;
    found.preview.classList.toggle("dim", !failed);
    if (result.duration !== undefined) found.meta.append(h("span.chip.time", { text: duration(result.duration) }));
    if (result.cached) found.meta.append(h("span.chip", { text: "cached" }));
    const details = node.querySelector("details");
    const full = h("pre.call-detail");
    full.textContent = text;
    details.append(h("div.call-section", {}, h("div.label", { text: failed ? "error" : "result" }), full));
    if (result.traceback) {
      const tb = h("pre.call-detail.traceback");
      tb.textContent = result.traceback;
      details.append(h("div.call-section", {}, h("div.label", { text: "traceback" }), tb));
    }
  }

  on_approval_requested(data) {
    this.markWaiting(data.approval.call_id);
  }

  on_approval_decided(data) {
    const d = data.decision;
    const action = !d.approved ? "denied" : d.arguments ? "edited" : "approved";
    if (!this.calls.has(d.call_id)) this.addCall(data.call);
    const found = this.calls.get(d.call_id);
    found.node.dataset.state = d.approved ? "running" : "error";
    found.node.dataset.decision = action;
    found.preview.textContent = d.approved ? "running…" : `denied${d.reason ? ": " + d.reason : ""}`;
    found.meta.append(h(`span.chip.decision.${action}`, { text: action }));
    if (d.arguments) found.node.querySelector("details").append(h("div.call-section", {}, h("div.label", { text: "edited arguments" }), h("pre.call-detail", { text: pretty(d.arguments) })));
  }

  /** A call that waits for a person's decision (live, or read back from the history). */
  markWaiting(callId) {
    const found = this.calls.get(callId);
    if (!found) return;
    found.node.dataset.state = "waiting";
    found.preview.textContent = "◷ waiting for approval";
  }

  on_partial_output(data) {
    const it = this.iteration(data.iteration);
    if (!it.partial) it.partial = this.row("partial", h("span.tag.info", { text: "typed output" }), h("span.partial-value"));
    it.partial.querySelector(".partial-value").textContent = short(JSON.stringify(data.output), 200);
  }

  on_custom(data) {
    const value = data.data || {};
    const detail = value.name || (value.distance_m !== undefined ? `${value.distance_m} m` : "");
    const asked = data.name === "mcp_elicitation_request" || data.name === "mcp_elicitation";
    const what = data.name === "ui" && value.action ? `${value.action}${detail ? " · " + detail : ""}` : asked ? `${value.server}: ${value.message}${data.name === "mcp_elicitation" ? ` → ${value.action}` : ""}` : short(JSON.stringify(value), 140);
    this.row("custom", h("span.tag", { text: data.name }), h("span", { text: what }));
  }

  on_no_tool_call(data) {
    this.row("note", h("span.tag.warn", { text: "no tool call" }), h("span.dim", { text: data.reminded ? "the model was reminded to use a tool" : "answer accepted without a tool" }));
  }

  on_retry(data) {
    this.row("retry", h("span.tag.warn", { text: `retry ${data.attempt}` }), h("span", { text: `waiting ${duration(data.wait)} — ${short(data.error, 140)}` }));
  }

  on_compaction(data) {
    const msgs = data.messages_before ? ` · ${data.messages_before} → ${data.messages_after} messages` : "";
    this.row("compaction", h("span.tag.info", { text: `compaction · ${data.tier}` }), h("span", { text: `${tokens(data.tokens_before)} → ${tokens(data.tokens_after)} tokens${msgs} · ${duration(data.duration)}` }));
  }

  on_plan_update(data) {
    this.setPlan(data.plan);
    this.row("custom", h("span.tag.info", { text: "plan" }), h("span", { text: planSummary(data.plan) }));
  }

  on_run_end(data) {
    const r = data.result || {};
    this.endTurn(r.state, r.metrics || {}, r.error);
    if (r.plan) this.setPlan(r.plan);
  }

  on_error(data) {
    this.row("call", h("span.tag.warn", { text: "error" }), h("span", { text: data.error }));
    this.endTurn("error", {}, data.error);
  }

  endTurn(state, m, error) {
    if (!this.turn) return;
    const { state: badge, node } = this.turn;
    badge.className = `badge ${state}`;
    badge.textContent = STATE_LABELS[state] || state;
    const bits = [];
    if (m.iterations !== undefined) bits.push(`${m.iterations} iteration${m.iterations === 1 ? "" : "s"}`);
    if (m.tool_calls !== undefined) bits.push(`${m.tool_calls} tool call${m.tool_calls === 1 ? "" : "s"}`);
    if (m.input_tokens || m.output_tokens) bits.push(`${tokens(m.input_tokens)} in / ${tokens(m.output_tokens)} out`);
    if (m.execution_time !== undefined) bits.push(duration(m.execution_time));
    node.append(h("footer.turn-foot", {}, bits.join(" · "), error ? h("div.error-text", { text: error }) : null));
    node.dataset.state = state;
    this.iter = null;
    this.follower.poke();
  }

  // -- the plan ------------------------------------------------------------------------------
  setPlan(plan) {
    clear(this.planBox);
    this.planBox.hidden = !plan || !(plan.steps || []).length;
    if (this.planBox.hidden) return;
    const current = plan.current_step;
    this.planBox.append(
      h("div.plan-goal", {}, h("span.label", { text: "plan" }), plan.goal || ""),
      h(
        "ol.plan-steps",
        {},
        plan.steps.map((step, i) =>
          h(
            `li.step.${step.status}`,
            { "aria-current": current === i + 1 ? "step" : undefined },
            h("span.mark", { text: STEP_MARKS[step.status] || "○" }),
            h("span.desc", { text: step.description }),
            step.result ? h("span.dim", { text: ` — ${short(step.result, 100)}` }) : null,
          ),
        ),
      ),
    );
  }

  // -- history (a stored session: no timings, no token counts) ---------------------------
  historyAssistant(message, k) {
    this.iteration(k);
    if (message.content) {
      this.on_text_delta({ iteration: k, text: message.content });
      this.iter.reply.classList.remove("streaming");
    }
    for (const call of message.tool_calls || []) this.addCall(call);
  }

  historyTool(message) {
    this.finishCall({ call_id: message.tool_call_id, name: message.name, content: message.content, error: message.is_error ? message.content : null }, !!message.is_error);
  }

  historyNote(message) {
    this.row("note", h("span.tag", { text: message.metadata.kind }), h("span.dim", { text: short(message.content, 160) }));
  }
}

function planSummary(plan) {
  if (!plan || !plan.steps) return "";
  const done = plan.steps.filter((s) => s.status === "completed").length;
  return `${done}/${plan.steps.length} steps done${plan.goal ? " — " + short(plan.goal, 80) : ""}`;
}
