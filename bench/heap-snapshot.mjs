// Reads V8 heap snapshots (.heapsnapshot, as the inspector's HeapProfiler.takeHeapSnapshot writes
// them) and compares two of the same isolate: which objects made between them are still alive,
// grouped by constructor, and what holds a few of each (the shortest retaining path from the GC
// roots, as DevTools' "Retainers" shows it).
import { readFileSync } from "node:fs";

/** A parsed snapshot with the field offsets resolved. */
export function readSnapshot(file) {
  const raw = JSON.parse(readFileSync(file, "utf8"));
  const meta = raw.snapshot.meta;
  const nf = meta.node_fields;
  const ef = meta.edge_fields;
  return {
    nodes: raw.nodes,
    edges: raw.edges,
    strings: raw.strings,
    nodeTypes: meta.node_types[0],
    edgeTypes: meta.edge_types[0],
    nodeFields: nf.length,
    edgeFields: ef.length,
    at: {
      type: nf.indexOf("type"),
      name: nf.indexOf("name"),
      id: nf.indexOf("id"),
      size: nf.indexOf("self_size"),
      edges: nf.indexOf("edge_count"),
      edgeType: ef.indexOf("type"),
      edgeName: ef.indexOf("name_or_index"),
      edgeTo: ef.indexOf("to_node"),
    },
  };
}

/** The group a node counts in: its constructor (objects), function name (closures) or its kind. */
function groupOf(s, node) {
  const type = s.nodeTypes[s.nodes[node + s.at.type]];
  const name = s.strings[s.nodes[node + s.at.name]];
  if (type === "string" || type === "concatenated string" || type === "sliced string") {
    return "(string)";
  }
  if (type === "object" || type === "closure") return `${type === "closure" ? "ƒ " : ""}${name}`;
  if (type === "native") return `(native) ${name.replace(/\s*\/.*$/, "").slice(0, 60)}`;
  return `(${type}) ${name.slice(0, 40)}`;
}

/** Node index -> index of its first edge, and the reverse edges (retainers) of every node. */
function graph(s) {
  const count = s.nodes.length / s.nodeFields;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += s.nodes[i * s.nodeFields + s.at.edges] * s.edgeFields;
  }
  firstEdge[count] = s.edges.length;
  const retainers = Array.from({ length: count }, () => []);
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += s.edgeFields) {
      const to = s.edges[e + s.at.edgeTo] / s.nodeFields;
      retainers[to].push(e, i);
    }
  }
  return { count, firstEdge, retainers };
}

/** Distance of each node from the root over strong edges (weak ones do not keep anything). */
function distances(s, g) {
  const distance = new Int32Array(g.count).fill(-1);
  distance[0] = 0;
  const queue = [0];
  for (let q = 0; q < queue.length; q++) {
    const i = queue[q];
    for (let e = g.firstEdge[i]; e < g.firstEdge[i + 1]; e += s.edgeFields) {
      if (s.edgeTypes[s.edges[e + s.at.edgeType]] === "weak") continue;
      const to = s.edges[e + s.at.edgeTo] / s.nodeFields;
      if (distance[to] === -1) {
        distance[to] = distance[i] + 1;
        queue.push(to);
      }
    }
  }
  return distance;
}

function edgeLabel(s, e) {
  const type = s.edgeTypes[s.edges[e + s.at.edgeType]];
  const nameOrIndex = s.edges[e + s.at.edgeName];
  if (type === "element" || type === "hidden") return `[${nameOrIndex}]`;
  return `.${s.strings[nameOrIndex]}`;
}

/** The shortest strong path from the root to node `i`, as "Group.edge <- Group.edge ...". */
function retainingPath(s, g, distance, i, depth = 12) {
  const steps = [];
  let at = i;
  for (let d = 0; d < depth && at !== 0; d++) {
    const list = g.retainers[at];
    let best = -1;
    let bestEdge = -1;
    for (let r = 0; r < list.length; r += 2) {
      const e = list[r];
      const from = list[r + 1];
      if (s.edgeTypes[s.edges[e + s.at.edgeType]] === "weak") continue;
      if (distance[from] < 0) continue;
      if (best === -1 || distance[from] < distance[best]) {
        best = from;
        bestEdge = e;
      }
    }
    if (best === -1) break;
    steps.push(`${groupOf(s, best * s.nodeFields)}${edgeLabel(s, bestEdge)}`);
    at = best;
  }
  return steps.join(" <- ");
}

/**
 * Objects alive in `after` that were not in `before` (by snapshot id: the same isolate keeps an
 * object's id), grouped; the `top` groups by retained bytes, each with retaining paths of up to
 * `paths` of its objects.
 */
export function compareSnapshots(beforeFile, afterFile, { top = 25, paths = 3 } = {}) {
  const before = readSnapshot(beforeFile);
  const known = new Set();
  for (let n = 0; n < before.nodes.length; n += before.nodeFields) {
    known.add(before.nodes[n + before.at.id]);
  }
  const beforeTotals = totals(before);
  const s = readSnapshot(afterFile);
  const afterTotals = totals(s);
  const groups = new Map();
  for (let n = 0; n < s.nodes.length; n += s.nodeFields) {
    if (known.has(s.nodes[n + s.at.id])) continue;
    const key = groupOf(s, n);
    const group = groups.get(key) ?? { count: 0, bytes: 0, sample: [] };
    group.count++;
    group.bytes += s.nodes[n + s.at.size];
    if (group.sample.length < 50) group.sample.push(n / s.nodeFields);
    groups.set(key, group);
  }
  const g = graph(s);
  const distance = distances(s, g);
  const ranked = [...groups].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top);
  const lines = [
    `heap before: ${mb(beforeTotals.bytes)} in ${beforeTotals.count} objects; after: ${mb(afterTotals.bytes)} in ${afterTotals.count}`,
    `made between the two and still alive: ${mb(sum(groups, "bytes"))} in ${sum(groups, "count")} objects`,
    "",
    "new and alive, by group (self size):",
  ];
  for (const [key, group] of ranked) {
    lines.push(`${mb(group.bytes).padStart(10)} ${String(group.count).padStart(8)}  ${key}`);
  }
  lines.push("", "what holds them (shortest path from the GC roots, a few per group):");
  for (const [key, group] of ranked.slice(0, Math.min(ranked.length, 12))) {
    lines.push(`- ${key}`);
    // Spread over the sample: the first objects of a group are often the same kind of holder.
    const picks = [0, Math.floor(group.sample.length / 2), group.sample.length - 1]
      .slice(0, paths)
      .map((i) => group.sample[i])
      .filter((i, at, all) => i !== undefined && all.indexOf(i) === at);
    for (const i of picks) lines.push(`    ${retainingPath(s, g, distance, i) || "(unreachable)"}`);
  }
  return lines.join("\n");
}

function totals(s) {
  let bytes = 0;
  let count = 0;
  for (let n = 0; n < s.nodes.length; n += s.nodeFields) {
    bytes += s.nodes[n + s.at.size];
    count++;
  }
  return { bytes, count };
}

const sum = (groups, key) => [...groups.values()].reduce((a, g) => a + g[key], 0);
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;
