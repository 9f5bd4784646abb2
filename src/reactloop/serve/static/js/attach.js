// Files for the next message: picked with the paperclip, dropped on the composer or pasted.
// Each is read once as a data URL: its base64 goes to the server, and pictures show as
// thumbnails (data: URLs, which the page's content security policy allows) in the tray, the
// chat and the trace. Stored history has references only, so earlier turns show names.

import { h, clear } from "./dom.js";

const MAX_BYTES = 3 * 1024 * 1024; // the server's default body limit is 4 MiB, base64 included

export function kindOf(type) {
  return type && type.startsWith("image/") ? "image" : "document";
}

/** A thumbnail (a picture with its bytes) or a chip naming the file. */
export function partView(part) {
  if (part.dataUrl && kindOf(part.type) === "image") {
    return h("img.thumb", { src: part.dataUrl, alt: part.name, title: part.name });
  }
  return h("span.file-chip", { title: part.type || "", text: `${kindOf(part.type) === "image" ? "🖼" : "📄"} ${part.name || "attachment"}` });
}

export class Tray {
  constructor(root, onError) {
    this.root = root;
    this.onError = onError;
    this.parts = [];
  }

  async add(files) {
    for (const file of files) {
      if (file.size > MAX_BYTES) {
        this.onError(`${file.name} is ${(file.size / 1048576).toFixed(1)} MiB; the dev UI sends files up to 3 MiB`);
        continue;
      }
      const dataUrl = await new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(reader.result);
        reader.onerror = () => reject(reader.error);
        reader.readAsDataURL(file);
      });
      this.parts.push({ name: file.name, type: file.type, dataUrl });
    }
    this.render();
  }

  take() {
    const parts = this.parts;
    this.parts = [];
    this.render();
    return parts;
  }

  render() {
    clear(this.root);
    this.root.hidden = !this.parts.length;
    this.parts.forEach((part, i) => {
      const remove = h("button.tray-remove", { type: "button", title: `Remove ${part.name}`, "aria-label": `Remove ${part.name}`, text: "×" });
      remove.addEventListener("click", () => {
        this.parts.splice(i, 1);
        this.render();
      });
      this.root.append(h("div.tray-item", {}, partView(part), remove));
    });
  }
}

/** The body's attachments: base64 without the data URL's prefix. */
export function wireParts(parts) {
  return parts.map((p) => {
    const out = { kind: kindOf(p.type), data: p.dataUrl.slice(p.dataUrl.indexOf(",") + 1), name: p.name };
    if (p.type) out.media_type = p.type;
    return out;
  });
}
