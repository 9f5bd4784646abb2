// The airport map of seed 001, drawn from the airport skill's own data (its points of
// interest and walkway graph, fetched through /api/skills/...). Tools of the skill emit `ui`
// events: `show_poi` drops a marker, `show_directions` draws the route.
//
// The data has no coordinates, only walkways with lengths, so the map is laid out here: the
// most central walkway node is the hub, its branches become piers (the two largest rise to
// the left and right, the next one down), a node with several branches turns them sideways, and
// edges get a length that grows with the square root of their metres.

import { h, s, clear } from "./dom.js";

const C = Math.cos(Math.PI / 6); // piers rise at 30 degrees: the map is wide, like its panel
const ROOT_DIRS = [[-C, -0.5], [C, -0.5], [0, 1], [0, -1], [-1, 0], [1, 0]];
const CODES = { gate: "", restroom: "WC", food: "F", shop: "S", lounge: "L", service: "i", medical: "+", transport: "T" };

export function findMapSkill(info) {
  return (info.skills || []).find(
    (skill) => skill.files.includes("data/pois.json") && skill.files.includes("data/walkways.json"),
  );
}

/** Positions for walkway nodes and points of interest: {nodes, pois, tree, buildings, root}. */
export function layout(walkways, pois) {
  const adj = new Map(Object.keys(walkways.nodes).map((id) => [id, []]));
  for (const e of walkways.edges) {
    adj.get(e.from)?.push([e.to, e.meters]);
    adj.get(e.to)?.push([e.from, e.meters]);
  }
  const root = centre(adj);
  const { parent, order, children } = bfsTree(adj, root);
  const size = new Map();
  for (const id of [...order].reverse()) size.set(id, 1 + children.get(id).reduce((n, c) => n + size.get(c), 0));
  const pos = new Map([[root, [0, 0]]]);
  const dirOf = new Map([[root, [0, 1]]]);
  for (const id of order) {
    const kids = [...children.get(id)].sort((a, b) => size.get(b) - size.get(a));
    const dirs = id === root ? ROOT_DIRS : turnDirs(dirOf.get(id), kids.length);
    kids.forEach((kid, i) => {
      const dir = dirs[i % dirs.length];
      const meters = adj.get(id).find(([n]) => n === kid)[1];
      const len = Math.max(34, 7 * Math.sqrt(meters));
      const [x, y] = pos.get(id);
      pos.set(kid, [x + dir[0] * len, y + dir[1] * len]);
      dirOf.set(kid, dir);
    });
  }
  const poiPos = placePois(pois, pos, dirOf);
  const buildingOf = nodeBuildings(pois, order, parent, children);
  return { nodes: pos, pois: poiPos, dirOf, parent, children, root, buildingOf, adj };
}

function centre(adj) {
  let best = null;
  for (const id of adj.keys()) {
    const { order, depth } = bfsTree(adj, id);
    const ecc = Math.max(...order.map((n) => depth.get(n)));
    const score = [ecc, -adj.get(id).length];
    if (!best || score[0] < best.score[0] || (score[0] === best.score[0] && score[1] < best.score[1])) best = { id, score };
  }
  return best.id;
}

function bfsTree(adj, root) {
  const parent = new Map([[root, null]]);
  const depth = new Map([[root, 0]]);
  const children = new Map([...adj.keys()].map((id) => [id, []]));
  const order = [root];
  for (let i = 0; i < order.length; i++) {
    const id = order[i];
    for (const [next] of adj.get(id)) {
      if (parent.has(next)) continue;
      parent.set(next, id);
      depth.set(next, depth.get(id) + 1);
      children.get(id).push(next);
      order.push(next);
    }
  }
  return { parent, depth, children, order };
}

function turnDirs([dx, dy], n) {
  // one branch goes straight on; several turn sideways first (largest to the right-hand side)
  return n === 1 ? [[dx, dy]] : [[dy, -dx], [-dy, dx], [dx, dy]];
}

function placePois(pois, pos, dirOf) {
  const byNode = new Map();
  for (const p of pois) {
    if (!byNode.has(p.node)) byNode.set(p.node, []);
    byNode.get(p.node).push(p);
  }
  const out = new Map();
  for (const [node, list] of byNode) {
    if (!pos.has(node)) continue;
    list.sort((a, b) => (a.category === "gate" ? 0 : 1) - (b.category === "gate" ? 0 : 1) || a.id - b.id);
    const [x, y] = pos.get(node);
    const [dx, dy] = dirOf.get(node);
    list.forEach((p, i) => {
      const side = i % 2 === 0 ? 1 : -1;
      const along = Math.floor(i / 2) * 22;
      const off = 24 + Math.min(p.offset_m || 0, 40) * 0.25;
      out.set(p.id, [x + side * dy * off + dx * along, y - side * dx * off + dy * along]);
    });
  }
  return out;
}

function nodeBuildings(pois, order, parent, children) {
  const votes = new Map();
  for (const p of pois) {
    const v = votes.get(p.node) || new Map();
    v.set(p.building, (v.get(p.building) || 0) + 1);
    votes.set(p.node, v);
  }
  const out = new Map();
  for (const [node, v] of votes) out.set(node, [...v].sort((a, b) => b[1] - a[1])[0][0]);
  // nodes without points take a child's building (an entrance belongs to its terminal)
  for (const id of [...order].reverse()) {
    if (!out.has(id)) {
      const kid = children.get(id).find((c) => out.has(c));
      if (kid) out.set(id, out.get(kid));
    }
  }
  for (const id of order) if (!out.has(id) && parent.get(id)) out.set(id, out.get(parent.get(id)));
  return out;
}

export class AirportMap {
  constructor(panel, api) {
    this.panel = panel;
    this.api = api;
    this.ready = false;
  }

  async load(info) {
    const skill = findMapSkill(info);
    if (!skill) return false;
    const [pois, walkways] = await Promise.all([
      this.api.skillFile(skill.name, "data/pois.json"),
      this.api.skillFile(skill.name, "data/walkways.json"),
    ]);
    this.pois = new Map(pois.map((p) => [p.id, p]));
    this.geo = layout(walkways, pois);
    this.walkways = walkways;
    this.render(skill.name, pois);
    this.ready = true;
    return true;
  }

  render(skillName, pois) {
    const g = this.geo;
    const buildings = [...new Set(pois.map((p) => p.building))];
    this.buildingClass = new Map(buildings.map((b, i) => [b, `bldg-${i % 6}`]));
    const labels = this.labelPlaces(pois);
    const xs = [];
    const ys = [];
    for (const [x, y] of [...g.nodes.values(), ...g.pois.values()]) {
      xs.push(x - 28, x + 28);
      ys.push(y - 28, y + 28);
    }
    for (const { x, y, text } of labels) {
      xs.push(x - text.length * 4, x + text.length * 4);
      ys.push(y - 16, y + 6);
    }
    const pad = 12;
    const [x0, y0] = [Math.min(...xs) - pad, Math.min(...ys) - pad - 30]; // room for a pin's label
    const box = [x0, y0, Math.max(...xs) + pad - x0, Math.max(...ys) + pad - y0];
    this.svg = s("svg.map", { viewBox: box.map((n) => n.toFixed(1)).join(" "), role: "img", "aria-label": "Airport map" });
    this.layers = {};
    for (const name of ["corridors", "walks", "labels", "route", "pois", "markers"]) {
      this.layers[name] = s(`g.${name}`);
      this.svg.append(this.layers[name]);
    }
    for (const { x, y, text } of labels) this.layers.labels.append(s("text.building-label", { x, y, text }));
    this.drawCorridors();
    this.drawPois(pois);
    const legend = h(
      "div.map-legend",
      {},
      Object.keys(CODES)
        .filter((c) => pois.some((p) => p.category === c))
        .map((c) => h("span.legend-item", {}, h(`span.legend-dot.cat-${c}`), c)),
    );
    this.status = h("span.map-status.dim", { text: "Ask about a gate, a restroom, food or directions." });
    clear(this.panel);
    this.panel.append(
      h("div.map-head", {}, h("span.label", { text: `map · ${skillName} skill` }), this.status),
      h("div.map-frame", {}, this.svg),
      legend,
    );
    this.panel.hidden = false;
  }

  drawCorridors() {
    const g = this.geo;
    const edges = [];
    for (const [id, kids] of g.children) for (const kid of kids) edges.push([id, kid]);
    for (const [a, b] of edges) {
      const [x1, y1] = g.nodes.get(a);
      const [x2, y2] = g.nodes.get(b);
      const cls = this.buildingClass.get(g.buildingOf.get(b)) || "bldg-x";
      this.layers.corridors.append(s(`line.corridor.${cls}`, { x1, y1, x2, y2 }));
      this.layers.walks.append(s("line.walk", { x1, y1, x2, y2 }));
    }
    const [rx, ry] = g.nodes.get(g.root);
    const hub = this.buildingClass.get(g.buildingOf.get(g.root)) || "bldg-x";
    this.layers.corridors.append(s(`circle.hub.${hub}`, { cx: rx, cy: ry, r: 30 }));
    for (const [id, name] of Object.entries(this.walkways.nodes)) {
      if (!/security/i.test(`${id} ${name}`)) continue;
      const [x, y] = g.nodes.get(id);
      const [dx, dy] = g.dirOf.get(id);
      this.layers.walks.append(
        s("line.checkpoint", { x1: x + dy * 17, y1: y - dx * 17, x2: x - dy * 17, y2: y + dx * 17 }),
        s("text.node-label", { x: x + 24, y: y + 4, text: "Security" }),
      );
    }
  }

  /** Where each building's name goes: above the hub, under a hall, beyond a pier's tip. */
  labelPlaces(pois) {
    const g = this.geo;
    const groups = new Map();
    for (const [node, building] of g.buildingOf) {
      if (!groups.has(building)) groups.set(building, []);
      groups.get(building).push(node);
    }
    const [rx, ry] = g.nodes.get(g.root);
    const out = [];
    for (const [building, nodes] of groups) {
      let x;
      let y;
      if (nodes.includes(g.root)) {
        [x, y] = [rx, ry - 52];
      } else {
        const pts = nodes.map((n) => g.nodes.get(n));
        const cx = pts.reduce((a, p) => a + p[0], 0) / pts.length;
        const cy = pts.reduce((a, p) => a + p[1], 0) / pts.length;
        if (cy - ry > Math.abs(cx - rx) * 0.5) {
          const ps = pois.filter((p) => p.building === building).map((p) => g.pois.get(p.id)).filter(Boolean);
          [x, y] = [cx, Math.max(...[...pts, ...ps].map((p) => p[1])) + 30];
        } else {
          const tip = nodes.reduce((far, n) => (dist(g.nodes.get(n), [rx, ry]) > dist(g.nodes.get(far), [rx, ry]) ? n : far));
          const [tx, ty] = g.nodes.get(tip);
          const [dx, dy] = g.dirOf.get(tip);
          [x, y] = [tx + dx * 50, ty + dy * 50 - 26];
        }
      }
      out.push({ x, y, text: building });
    }
    return out;
  }

  drawPois(pois) {
    const g = this.geo;
    this.poiNodes = new Map();
    for (const p of pois) {
      const at = g.pois.get(p.id);
      if (!at) continue;
      const gate = p.category === "gate";
      const code = gate ? p.name.replace(/\D+/g, "") : CODES[p.category] || "•";
      const node = s(
        `g.poi.cat-${p.category}`,
        { transform: `translate(${at[0].toFixed(1)} ${at[1].toFixed(1)})`, dataset: { poi: p.id } },
        s("title", { text: `${p.name} · ${p.building}` }),
        s("circle", { r: gate ? 9.5 : 8 }),
        s("text", { y: 3.4, text: code }),
      );
      this.layers.pois.append(node);
      this.poiNodes.set(p.id, node);
    }
  }

  reset() {
    if (!this.ready) return;
    clear(this.layers.markers);
    clear(this.layers.route);
    for (const node of this.poiNodes.values()) node.classList.remove("active");
    this.status.textContent = "Ask about a gate, a restroom, food or directions.";
  }

  /** Live events: the skill's `ui` custom events. */
  handle(type, data) {
    if (!this.ready || type !== "custom" || data.name !== "ui") return;
    const v = data.data || {};
    if (v.action === "show_poi") this.showPoi(v.poi_id);
    else if (v.action === "show_directions") this.showRoute(v.path || [], v.distance_m);
  }

  /** A stored session: the same side effects, read back from its tool calls. */
  replay(call, resultContent) {
    if (!this.ready) return;
    if (call.name === "show_poi") this.showPoi(call.arguments.poi_id);
    if (call.name === "show_directions") {
      try {
        const route = JSON.parse(resultContent);
        this.showRoute(route.path || [], route.distance_m);
      } catch {
        /* an error result: nothing was drawn */
      }
    }
  }

  showPoi(id) {
    const p = this.pois.get(Number(id));
    const at = this.geo.pois.get(Number(id));
    if (!p || !at) return;
    for (const old of this.layers.markers.querySelectorAll(".pin")) old.classList.remove("latest");
    this.poiNodes.get(p.id)?.classList.add("active");
    const label = p.name;
    const width = 14 + label.length * 6.6;
    this.layers.markers.append(
      s(
        "g.pin.latest",
        { transform: `translate(${at[0].toFixed(1)} ${at[1].toFixed(1)})`, dataset: { marker: p.id } },
        s("circle.pin-pulse", { r: 14 }),
        s("path.pin-body", { d: "M0 -2 C -3 -9 -11 -14 -11 -23 A 11 11 0 1 1 11 -23 C 11 -14 3 -9 0 -2 Z" }),
        s("circle.pin-hole", { cy: -23, r: 4 }),
        s("rect.pin-label-bg", { x: -width / 2, y: -58, width, height: 20, rx: 6 }),
        s("text.pin-label", { y: -44, text: label }),
      ),
    );
    this.status.textContent = `${p.name} · ${p.building}`;
  }

  showRoute(path, meters) {
    const pts = path.map((n) => (n.startsWith("poi-") ? this.geo.pois.get(Number(n.slice(4))) : this.geo.nodes.get(n))).filter(Boolean);
    if (pts.length < 2) return;
    clear(this.layers.route);
    const points = pts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(" ");
    const [sx, sy] = pts[0];
    const [ex, ey] = pts[pts.length - 1];
    this.layers.route.append(
      s("polyline.route-casing", { points }),
      s("polyline.route", { points, dataset: { route: path.join(" ") } }),
      s("circle.route-start", { cx: sx, cy: sy, r: 7 }),
      s("circle.route-end", { cx: ex, cy: ey, r: 7 }),
    );
    const names = [path[0], path[path.length - 1]].map((n) => (n.startsWith("poi-") ? this.pois.get(Number(n.slice(4)))?.name : this.walkways.nodes[n]));
    this.status.textContent = `Route ${names[0]} → ${names[1]}${meters ? ` · ${meters} m` : ""}`;
  }
}

function dist([ax, ay], [bx, by]) {
  return Math.hypot(ax - bx, ay - by);
}
