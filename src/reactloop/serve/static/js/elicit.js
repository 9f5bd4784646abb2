// An MCP server's question (elicitation) while its tool runs: a form built from the requested
// schema (text, number, integer, yes/no, one choice, several choices), required fields marked,
// defaults filled in, every value checked before it is sent (types, ranges, lengths, formats).
// Accept sends the values, Decline and Cancel send just that: the server hears all three, and
// the run (still streaming below) goes on. A URL question shows its link and asks for Accept
// once done. The server checks the answer again (400: shown on the form).

import { h } from "./dom.js";

const FORMATS = {
  email: /^[^@\s]+@[^@\s]+\.[^@\s]+$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  "date-time": /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/,
};

export class Questions {
  constructor(root, follower, onAnswer) {
    this.root = root;
    this.follower = follower;
    this.onAnswer = onAnswer; // async ({id, action, content}) => void; throws with a message
    this.cards = new Map();
  }

  reset() {
    for (const card of this.cards.values()) card.remove();
    this.cards = new Map();
  }

  /** Show `question` (the data of an mcp_elicitation_request event) as a form. */
  show(question) {
    if (this.cards.has(question.id)) return;
    const fields = fieldsOf(question.schema || {});
    const problem = h("div.elicit-problem", { role: "alert" });
    const status = h("div.elicit-status");
    const accept = h("button.btn.primary.elicit-accept", { type: "submit", text: "Accept" });
    const decline = h("button.btn.elicit-decline", { type: "button", text: "Decline" });
    const cancel = h("button.btn.elicit-cancel", { type: "button", text: "Cancel" });
    // a link only to a web page: a server's javascript: or data: URL stays text
    const web = /^https?:\/\//i.test(question.url || "");
    const link = question.mode === "url" && question.url ? (web ? h("a.elicit-url", { href: question.url, target: "_blank", rel: "noopener noreferrer", text: question.url }) : h("code.elicit-url", { text: question.url })) : null;
    const form = h(
      "form.elicit",
      { dataset: { id: question.id, server: question.server }, novalidate: true, "aria-label": `Question from MCP server ${question.server}` },
      h("div.elicit-head", {}, h("span.approval-icon", { text: "?" }), h("span", { text: `MCP server ` }), h("code", { text: question.server }), h("span", { text: " asks" })),
      h("div.elicit-message", { text: question.message }),
      link,
      fields.map((f) => f.row),
      problem,
      h("div.approval-actions", {}, accept, decline, cancel),
      status,
    );
    form.addEventListener("submit", (ev) => {
      ev.preventDefault();
      const content = {};
      let bad = 0;
      for (const f of fields) {
        const [value, error] = f.read();
        f.row.querySelector(".elicit-error").textContent = error || "";
        f.row.classList.toggle("invalid", Boolean(error));
        if (error) bad += 1;
        else if (value !== undefined) content[f.name] = value;
      }
      problem.textContent = bad ? `Check ${bad === 1 ? "the marked field" : `the ${bad} marked fields`}.` : "";
      if (!bad) this.send(form, { id: question.id, action: "accept", content });
    });
    decline.addEventListener("click", () => this.send(form, { id: question.id, action: "decline" }));
    cancel.addEventListener("click", () => this.send(form, { id: question.id, action: "cancel" }));
    this.cards.set(question.id, form);
    this.root.append(form);
    this.follower.jump();
    form.querySelector("input, select, button")?.focus();
  }

  async send(form, answer) {
    const controls = form.querySelectorAll("button, input, select");
    for (const el of controls) el.disabled = true;
    try {
      await this.onAnswer(answer);
    } catch (e) {
      for (const el of controls) el.disabled = false;
      form.querySelector(".elicit-problem").textContent = e.message;
      return;
    }
    form.dataset.answer = answer.action;
    form.querySelector(".elicit-status").textContent = { accept: "accepted", decline: "declined", cancel: "cancelled" }[answer.action];
  }

  /** The server's answer event (`mcp_elicitation`): a question that timed out is closed. */
  answered(data) {
    for (const form of this.cards.values()) {
      if (form.dataset.answer || form.dataset.server !== data.server) continue;
      if (form.querySelector(".elicit-message").textContent !== data.message) continue;
      form.dataset.answer = data.action;
      for (const el of form.querySelectorAll("button, input, select")) el.disabled = true;
      form.querySelector(".elicit-status").textContent = data.action === "cancel" ? "cancelled (no answer)" : data.action;
    }
  }
}

/** The form's fields: {name, row, read() -> [value | undefined, error | null]}. */
function fieldsOf(schema) {
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties || {}).map(([name, spec]) => field(name, spec || {}, required.has(name)));
}

function options(spec) {
  if (Array.isArray(spec.enum)) return spec.enum.map((v, i) => [String(v), String((spec.enumNames || [])[i] ?? v)]);
  for (const key of ["oneOf", "anyOf"]) {
    if (Array.isArray(spec[key])) return spec[key].filter((o) => o && "const" in o).map((o) => [String(o.const), String(o.title ?? o.const)]);
  }
  return [];
}

function field(name, spec, required) {
  const id = `elicit-${name}-${Math.random().toString(36).slice(2, 8)}`;
  const title = spec.title || name;
  const label = h("label.elicit-label", { for: id }, title, required ? h("span.elicit-required", { title: "required", text: " *" }) : null);
  const hint = spec.description ? h("div.elicit-hint.dim", { text: spec.description }) : null;
  const error = h("div.elicit-error", { role: "alert" });
  const kind = spec.type === "array" ? "choices" : options(spec).length ? "choice" : spec.type || "string";
  let input;
  let read;
  if (kind === "boolean") {
    input = h("input.elicit-input", { id, name, type: "checkbox" });
    input.checked = spec.default === true;
    read = () => [input.checked, null];
  } else if (kind === "choice") {
    input = h("select.elicit-input", { id, name }, required && spec.default === undefined ? h("option", { value: "", text: "— choose —" }) : null, !required ? h("option", { value: "", text: "(none)" }) : null, options(spec).map(([v, l]) => h("option", { value: v, text: l })));
    if (spec.default !== undefined) input.value = String(spec.default);
    read = () => (input.value === "" ? (required ? [undefined, "Choose one."] : [undefined, null]) : [input.value, null]);
  } else if (kind === "choices") {
    const opts = options(spec.items || {});
    const chosen = new Set(Array.isArray(spec.default) ? spec.default.map(String) : []);
    input = h("div.elicit-choices", { id, role: "group" }, opts.map(([v, l]) => h("label.elicit-choice", {}, h("input", { type: "checkbox", value: v, name, checked: chosen.has(v) }), ` ${l}`)));
    read = () => {
      const values = [...input.querySelectorAll("input:checked")].map((c) => c.value);
      if (required && !values.length) return [undefined, "Choose at least one."];
      if (spec.minItems !== undefined && values.length < spec.minItems) return [undefined, `Choose at least ${spec.minItems}.`];
      if (spec.maxItems !== undefined && values.length > spec.maxItems) return [undefined, `Choose at most ${spec.maxItems}.`];
      return [values.length || required ? values : undefined, null];
    };
  } else {
    const numeric = kind === "number" || kind === "integer";
    const type = numeric ? "number" : { email: "email", uri: "url", date: "date" }[spec.format] || "text";
    input = h("input.elicit-input", { id, name, type, step: kind === "integer" ? "1" : numeric ? "any" : undefined, min: spec.minimum, max: spec.maximum, placeholder: spec.format || "" });
    if (spec.default !== undefined) input.value = String(spec.default);
    read = () => readText(input.value.trim(), kind, spec, required);
  }
  const row = h("div.elicit-field", { dataset: { field: name, kind } }, label, hint, input, error);
  input.addEventListener("input", () => {
    error.textContent = ""; // checked again on the next Accept
    row.classList.remove("invalid");
  });
  return { name, row, read };
}

function readText(text, kind, spec, required) {
  if (!text) return required ? [undefined, "An answer is required."] : [undefined, null];
  if (kind === "number" || kind === "integer") {
    const value = Number(text);
    if (!Number.isFinite(value)) return [undefined, "Not a number."];
    if (kind === "integer" && !Number.isInteger(value)) return [undefined, "Not a whole number."];
    if (spec.minimum !== undefined && value < spec.minimum) return [undefined, `At least ${spec.minimum}.`];
    if (spec.maximum !== undefined && value > spec.maximum) return [undefined, `At most ${spec.maximum}.`];
    return [value, null];
  }
  if (spec.minLength !== undefined && text.length < spec.minLength) return [undefined, `At least ${spec.minLength} characters.`];
  if (spec.maxLength !== undefined && text.length > spec.maxLength) return [undefined, `At most ${spec.maxLength} characters.`];
  if (spec.format && FORMATS[spec.format] && !FORMATS[spec.format].test(text)) return [undefined, `Not a valid ${spec.format}.`];
  return [text, null];
}
