// The server's API: JSON calls and the SSE stream of a run (fetch + a small parser, since
// EventSource can neither POST nor send the Authorization header).

const TOKEN_KEY = "reactloop.token";

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export class Api {
  constructor(askToken) {
    this.askToken = askToken; // async () => token | null, when the server answers 401
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
    if (fromHash) {
      sessionStorage.setItem(TOKEN_KEY, fromHash);
      history.replaceState(null, "", location.pathname + location.search);
    }
  }

  headers(json) {
    const out = {};
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) out.Authorization = `Bearer ${token}`;
    if (json) out["Content-Type"] = "application/json";
    return out;
  }

  async fetch(path, init = {}, retried = false) {
    const response = await fetch(path, {
      ...init,
      headers: { ...this.headers(init.body !== undefined), ...(init.headers || {}) },
    });
    if (response.status === 401 && !retried) {
      const token = await this.askToken();
      if (token) {
        sessionStorage.setItem(TOKEN_KEY, token);
        return this.fetch(path, init, true);
      }
    }
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      try {
        message = (await response.json()).error || message;
      } catch {
        /* not JSON */
      }
      throw new ApiError(response.status, message);
    }
    return response;
  }

  async json(path, init) {
    return (await this.fetch(path, init)).json();
  }

  info() {
    return this.json("/api/info");
  }

  sessions() {
    return this.json("/api/sessions");
  }

  session(id) {
    return this.json(`/api/sessions/${encodeURIComponent(id)}`);
  }

  createSession() {
    return this.json("/api/sessions", { method: "POST", body: "{}" });
  }

  deleteSession(id) {
    return this.json(`/api/sessions/${encodeURIComponent(id)}`, { method: "DELETE" });
  }

  async skillFile(skill, path) {
    const response = await this.fetch(
      `/api/skills/${encodeURIComponent(skill)}/files/${path.split("/").map(encodeURIComponent).join("/")}`,
    );
    return response.json();
  }

  /** Send a message; calls onEvent(type, data) for every event of the run, in order. */
  send(sessionId, text, onEvent, signal, attachments = []) {
    const body = attachments.length ? { text, attachments } : { text };
    return this.stream(`/api/sessions/${encodeURIComponent(sessionId)}/messages`, body, onEvent, signal);
  }

  /** Send decisions on the calls waiting for approval; the run goes on (events as in send). */
  decide(sessionId, decisions, onEvent, signal) {
    return this.stream(`/api/sessions/${encodeURIComponent(sessionId)}/approvals`, { decisions }, onEvent, signal);
  }

  /** Answer an MCP server's question ({id, action, content?}); the run's stream goes on. */
  answerQuestion(sessionId, answer) {
    return this.json(`/api/sessions/${encodeURIComponent(sessionId)}/elicitations`, { method: "POST", body: JSON.stringify(answer) });
  }

  async stream(path, body, onEvent, signal) {
    const response = await this.fetch(path, {
      method: "POST",
      body: JSON.stringify(body),
      headers: { Accept: "text/event-stream" },
      signal,
    });
    await readSSE(response.body, onEvent);
  }
}

/** Parse a text/event-stream body; comments (keep-alives) are skipped. */
export async function readSSE(body, onEvent) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    const blocks = buffer.split("\n\n");
    buffer = blocks.pop(); // the unfinished tail
    for (const block of blocks) {
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) onEvent(type, JSON.parse(data.join("\n")));
    }
  }
}
