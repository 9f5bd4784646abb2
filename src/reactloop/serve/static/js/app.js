// The dev UI of `reactloop serve`: sessions on the left, the chat (with the airport map when
// the agent has the airport skill) in the middle, the run's trace on the right. Tool calls
// waiting for approval show as cards in the chat (approve, deny, edit); an MCP server's question
// (elicitation) shows as a form there while the run waits for it.

import { Api } from "./api.js";
import { Approvals } from "./approvals.js";
import { Chat } from "./chat.js";
import { Questions } from "./elicit.js";
import { Trace } from "./trace.js";
import { AirportMap } from "./map.js";
import { Tray, wireParts } from "./attach.js";
import { h, clear, ago, short, Follower } from "./dom.js";

const $ = (id) => document.getElementById(id);
const MAP_SUGGESTIONS = ["where is gate B12?", "how do I get from gate B12 to the coffee bar?"];

class App {
  constructor() {
    this.api = new Api(() => this.askToken());
    this.chat = new Chat($("messages"), new Follower($("messages")));
    this.trace = new Trace($("trace-body"), $("plan"), new Follower($("trace-body")));
    this.map = new AirportMap($("map-panel"), this.api);
    this.approvals = new Approvals($("messages"), this.chat.follower, (decisions) => this.decide(decisions));
    this.questions = new Questions($("messages"), this.chat.follower, (answer) => this.api.answerQuestion(this.sessionId, answer));
    this.tray = new Tray($("tray"), (message) => this.chat.notice(message));
    this.sessionId = null;
    this.running = false;
  }

  async start() {
    this.bindComposer();
    $("new-session").addEventListener("click", () => this.newSession());
    try {
      const info = await this.api.info();
      this.showAgent(info);
      this.connected(true);
      await this.map.load(info).catch((e) => console.warn("map", e));
    } catch (e) {
      this.connected(false, e.message);
      return;
    }
    await this.refreshSessions();
    const wanted = new URLSearchParams(location.hash.slice(1)).get("s");
    if (wanted) await this.open(wanted);
    else this.blank();
  }

  connected(ok, why) {
    $("conn").dataset.state = ok ? "ok" : "down";
    $("conn-text").textContent = ok ? "connected" : `offline${why ? ": " + short(why, 60) : ""}`;
  }

  showAgent(info) {
    const tools = info.tools || [];
    const skills = (info.skills || []).map((s) => s.name);
    clear($("agent")).append(
      h("span.agent-name", { text: info.name }),
      h("span.chip", { title: "model", text: info.model }),
      h("span.chip", { title: tools.join(", "), text: `${tools.length} tools` }),
      skills.length ? h("span.chip", { title: skills.join(", "), text: `skills: ${skills.join(", ")}` }) : null,
    );
  }

  bindComposer() {
    const input = $("input");
    $("composer").addEventListener("submit", (ev) => {
      ev.preventDefault();
      const text = input.value.trim();
      if (!text || this.running) return;
      input.value = "";
      this.grow();
      this.send(text, this.tray.take());
    });
    $("file-input").addEventListener("change", (ev) => {
      this.tray.add([...ev.target.files]);
      ev.target.value = "";
    });
    const composer = $("composer");
    composer.addEventListener("dragover", (ev) => ev.preventDefault());
    composer.addEventListener("drop", (ev) => {
      ev.preventDefault();
      if (ev.dataTransfer?.files?.length) this.tray.add([...ev.dataTransfer.files]);
    });
    input.addEventListener("paste", (ev) => {
      const files = [...(ev.clipboardData?.files || [])];
      if (files.length) {
        ev.preventDefault();
        this.tray.add(files);
      }
    });
    input.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
        ev.preventDefault();
        $("composer").requestSubmit();
      }
    });
    input.addEventListener("input", () => this.grow());
  }

  grow() {
    const input = $("input");
    input.style.height = "auto";
    input.style.height = `${Math.min(input.scrollHeight, 180)}px`;
  }

  askToken() {
    const dialog = $("token-dialog");
    $("token-input").value = "";
    dialog.showModal();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => resolve(dialog.returnValue === "ok" ? $("token-input").value.trim() : null), { once: true });
    });
  }

  // -- sessions ------------------------------------------------------------------------------
  async refreshSessions() {
    let list = [];
    try {
      list = await this.api.sessions();
    } catch (e) {
      this.connected(false, e.message);
      // the server answers but its store failed: its message names the store and the fix
      if (e.status >= 500) clear($("session-list")).append(h("li.session-empty.session-error", { text: e.message }));
      return;
    }
    const ul = clear($("session-list"));
    if (!list.length) ul.append(h("li.session-empty.dim", { text: "No sessions yet." }));
    for (const s of list) {
      const li = h(
        "li.session",
        { dataset: { id: s.id }, tabindex: 0, title: s.id },
        h("div.session-title", { text: s.title || "New session" }),
        h("div.session-meta.dim", {}, s.running ? h("span.live-dot", { title: "running" }) : null, `${s.messages} messages · ${ago(s.updated)}`),
        h("button.session-delete", { type: "button", title: "Delete this session", "aria-label": "Delete session", text: "×" }),
      );
      li.classList.toggle("active", s.id === this.sessionId);
      li.addEventListener("click", (ev) => {
        if (ev.target.closest(".session-delete")) this.remove(s.id);
        else if (s.id !== this.sessionId) this.open(s.id);
      });
      li.addEventListener("keydown", (ev) => ev.key === "Enter" && this.open(s.id));
      ul.append(li);
    }
  }

  select(id) {
    this.sessionId = id;
    history.replaceState(null, "", id ? `#s=${encodeURIComponent(id)}` : location.pathname);
    for (const li of document.querySelectorAll(".session")) li.classList.toggle("active", li.dataset.id === id);
  }

  blank() {
    this.select(null);
    this.chat.reset();
    this.approvals.reset();
    this.questions.reset();
    this.trace.reset();
    this.map.reset();
    this.chat.empty(this.map.ready ? "Try one of these:" : "Your messages and the agent's answers appear here; the trace on the right shows how it got there.");
    if (this.map.ready) {
      $("messages").querySelector(".empty").append(
        h("div.suggestions", {}, MAP_SUGGESTIONS.map((text) => h("button.btn.suggestion", { type: "button", text, onclick: () => this.send(text) }))),
      );
    }
  }

  async newSession() {
    if (this.running) return;
    this.blank();
    $("input").focus();
  }

  async open(id) {
    if (this.running) return;
    this.select(id);
    this.chat.reset();
    this.approvals.reset();
    this.questions.reset();
    this.trace.reset();
    this.map.reset();
    let data;
    try {
      data = await this.api.session(id);
    } catch (e) {
      this.chat.notice(`Could not open session ${id}: ${e.message}`);
      return;
    }
    this.replay(data.messages);
    this.trace.setPlan(data.plan);
    const pending = data.pending_approvals || [];
    for (const p of pending) this.trace.markWaiting(p.call_id);
    this.approvals.show(pending);
    for (const q of data.pending_elicitations || []) this.questions.show(q); // its run waits live
    if (data.running) this.chat.notice("This session is running a message in another window; reload when it has finished.");
  }

  async remove(id) {
    if (!confirm("Delete this session and its history?")) return;
    try {
      await this.api.deleteSession(id);
    } catch (e) {
      this.chat.notice(`Could not delete: ${e.message}`);
      return;
    }
    if (id === this.sessionId) this.blank();
    await this.refreshSessions();
  }

  replay(messages) {
    if (!messages.length) {
      this.chat.empty("This session has no messages yet.");
      return;
    }
    const results = new Map(messages.filter((m) => m.role === "tool").map((m) => [m.tool_call_id, m]));
    let k = 0;
    for (const m of messages) {
      const kind = m.metadata && m.metadata.kind;
      if (m.role === "user" && !kind) {
        const parts = (m.attachments || []).map((a) => ({ name: a.name || a.url || a.sha256.slice(0, 12), type: a.media_type }));
        this.chat.user(m.content, parts);
        this.trace.startTurn(m.content, true, parts);
        k = 0;
      } else if (m.role === "user") {
        this.trace.historyNote(m);
      } else if (m.role === "assistant") {
        k += 1;
        this.trace.historyAssistant(m, k);
        const calls = m.tool_calls || [];
        if (calls.length) {
          this.chat.activity(calls.map((c) => c.name));
          for (const c of calls) this.map.replay(c, results.get(c.id)?.content);
        } else if (m.content) {
          this.chat.assistant(m.content);
        }
      } else if (m.role === "tool") {
        this.trace.historyTool(m);
      }
    }
  }

  // -- running a message --------------------------------------------------------------------
  async send(text, parts = []) {
    if (this.running) return;
    if (this.approvals.open) {
      this.chat.notice("Decide the tool calls waiting for approval first.");
      return;
    }
    this.setRunning(true);
    try {
      if (!this.sessionId) {
        const { id } = await this.api.createSession();
        this.select(id);
        this.chat.reset();
      }
      this.chat.user(text, parts);
      this.chat.waiting();
      this.trace.startTurn(text, false, parts);
      await this.follow((onEvent) => this.api.send(this.sessionId, text, onEvent, undefined, wireParts(parts)));
    } catch (e) {
      this.failed(e, "Could not run the message");
    } finally {
      this.setRunning(false);
      this.refreshSessions();
    }
  }

  /** Decisions on the calls waiting for approval: the same run goes on. */
  async decide(decisions) {
    if (this.running) return;
    this.setRunning(true);
    try {
      const said = decisions.map((d) => (d.approved ? (d.arguments ? "edited" : "approved") : "denied")).join(", ");
      this.chat.waiting();
      this.trace.startTurn(`decisions: ${said}`);
      await this.follow((onEvent) => this.api.decide(this.sessionId, decisions, onEvent));
    } catch (e) {
      this.failed(e, "Could not send the decisions");
      const data = await this.api.session(this.sessionId).catch(() => null);
      if (data) this.approvals.show(data.pending_approvals); // what still waits, from the store
    } finally {
      this.setRunning(false);
      this.refreshSessions();
    }
  }

  /** Stream a run into the trace, the chat and the map; then show what waits for approval. */
  async follow(start) {
    let result = null;
    await start((type, data) => {
      if (data && data.parent_run_id) return this.trace.subRun(type, data); // a sub-agent's run
      this.trace.handle(type, data);
      this.chat.handle(type, data);
      this.map.handle(type, data);
      if (type === "custom" && data.name === "mcp_elicitation_request") this.questions.show(data.data);
      if (type === "custom" && data.name === "mcp_elicitation") this.questions.answered(data.data);
      if (type === "run_end") result = data.result;
    });
    if (result && result.pending_approvals) this.approvals.show(result.pending_approvals);
  }

  failed(e, what) {
    const why = e.status === 409 && /still running/.test(e.message) ? "This session is still running a message; wait for it to finish." : `${what}: ${e.message}`;
    this.chat.stopWaiting();
    this.chat.notice(why);
    this.trace.on_error({ error: why });
  }

  setRunning(on) {
    this.running = on;
    document.body.classList.toggle("running", on);
    $("send").disabled = on;
    $("send").textContent = on ? "Running…" : "Send";
  }
}

new App().start();
