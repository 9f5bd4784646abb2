// Small DOM helpers. Every piece of text goes in with textContent: model output, tool results
// and session titles are never parsed as HTML.

const SVG_NS = "http://www.w3.org/2000/svg";

/** h("div.a.b", {title: "x", onclick: fn}, child, "text", ...) -> HTMLElement */
export function h(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  const node = document.createElement(name || "div");
  return fill(node, classes, attrs, children);
}

/** s("circle.poi", {cx: 1, cy: 2}) -> SVGElement */
export function s(tag, attrs, ...children) {
  const [name, ...classes] = tag.split(".");
  return fill(document.createElementNS(SVG_NS, name), classes, attrs, children);
}

function fill(node, classes, attrs, children) {
  if (classes.length) node.classList.add(...classes);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "text") node.textContent = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

/** Pretty JSON for display; strings stay as they are. */
export function pretty(value, indent = 2) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, indent);
  } catch {
    return String(value);
  }
}

/** One line, at most n characters. */
export function short(text, n = 120) {
  const one = String(text ?? "").replace(/\s+/g, " ").trim();
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}

export function duration(seconds) {
  if (seconds === undefined || seconds === null) return "";
  if (seconds < 0.001) return "<1 ms";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
}

export function tokens(n) {
  if (n === undefined || n === null) return "";
  return n >= 10000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

export function ago(unixSeconds) {
  const s = Math.max(0, Date.now() / 1000 - unixSeconds);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(unixSeconds * 1000).toLocaleDateString();
}

/** Keeps a scroller pinned to the bottom while the user has not scrolled up; one scroll per
 * animation frame however many events arrive. */
export class Follower {
  constructor(scroller) {
    this.scroller = scroller;
    this.pinned = true;
    this.pending = false;
    scroller.addEventListener("scroll", () => {
      const gap = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight;
      this.pinned = gap < 48;
    });
  }

  poke() {
    if (!this.pinned || this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.scroller.scrollTop = this.scroller.scrollHeight;
    });
  }

  jump() {
    this.pinned = true;
    this.poke();
  }
}
