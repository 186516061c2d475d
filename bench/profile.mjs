// A CPU profile of the Worker's isolate (the Worker and its Durable Objects) while it serves
// assistant turns, taken through wrangler dev's inspector: where a turn's CPU goes, per function, in
// ms per turn. A diagnostic for `pnpm bench profile [turns] [bare]`, not part of RESULTS.md.
import { writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { startDevModel } from "../packages/dev-model/src/index.ts";
import { inspector } from "./inspector.mjs";
import { freePort, startWorker } from "./lib.mjs";
import { assistantSessions, platform } from "./turns.mjs";

const root = path.resolve(import.meta.dirname, "..");

/** Self and inclusive time per function (name, file, line), in ms per turn, biggest first. */
export function summarizeProfile(profile, turns, top = 25, intervalUs = 100) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const sampled = new Map();
  // A sample's delta is the time since the one before: after the isolate sat outside JS (a wait
  // the sampler did not see), it would charge the wait to the function that ran next. Each
  // sample counts at most four intervals, so the totals are CPU, not wall time.
  let uncapped = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    uncapped += delta;
    sampled.set(id, (sampled.get(id) ?? 0) + Math.min(delta, 4 * intervalUs));
  });
  const label = (node) => {
    const f = node.callFrame;
    return `${f.functionName || "(anonymous)"} ${path.basename(f.url || "")}:${f.lineNumber}`;
  };
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  for (const [id, us] of sampled) {
    total += us;
    self.set(label(byId.get(id)), (self.get(label(byId.get(id))) ?? 0) + us);
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const key = label(byId.get(at));
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + us);
    }
  }
  const table = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, us]) => `${(us / 1000 / turns).toFixed(3).padStart(8)}  ${key}`)
      .join("\n");
  const idle = self.get("(idle) :-1") ?? 0;
  return [
    `${(total / 1000 / turns).toFixed(1)} ms of samples per turn (${(uncapped / 1000 / turns).toFixed(1)} ms of wall time sampled); CPU without (idle): ${((total - idle) / 1000 / turns).toFixed(1)} ms per turn`,
    "",
    "self (ms/turn):",
    table(self),
    "",
    "inclusive (ms/turn):",
    table(inclusive),
  ].join("\n");
}

/**
 * Bytes allocated per turn by function (self: allocated there; inclusive: there and below), from a
 * sampling heap profile that keeps the objects garbage collection took (every allocation, not
 * what survives): where a turn's garbage comes from, which sets how far V8 grows the heap.
 */
export function summarizeAllocations(profile, turns, top = 25) {
  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  const label = (f) =>
    `${f.functionName || "(anonymous)"} ${path.basename(f.url || "")}:${f.lineNumber}`;
  const walk = (node, above) => {
    const key = label(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + node.selfSize);
    total += node.selfSize;
    const chain = above.includes(key) ? above : [...above, key];
    for (const k of chain) inclusive.set(k, (inclusive.get(k) ?? 0) + node.selfSize);
    for (const child of node.children ?? []) walk(child, chain);
  };
  walk(profile.head, []);
  const kib = (bytes) => (bytes / 1024 / turns).toFixed(1).padStart(8);
  const table = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, bytes]) => `${kib(bytes)}  ${key}`)
      .join("\n");
  return [
    `${kib(total).trim()} KiB allocated per turn (sampled, garbage included)`,
    "",
    "self (KiB/turn):",
    table(self),
    "",
    "inclusive (KiB/turn):",
    table(inclusive),
  ].join("\n");
}

export async function benchProfile({
  turns = 100,
  bare = false,
  paced = false,
  fresh = false,
  chosen = false,
  alloc = false,
} = {}) {
  // `paced`: the concurrency benchmark's model (150 ms, then 60 tokens/s), so the per-token work
  // shows; otherwise the reply comes at once and a turn's fixed work dominates.
  const model = await startDevModel({
    port: 0,
    latencyMs: paced ? 150 : 0,
    tokensPerSecond: paced ? 60 : 0,
  });
  const inspectorPort = await freePort();
  const worker = bare
    ? await startWorker(path.join(root, "packages/chat-client/test/fixture/wrangler.jsonc"), {
        vars: { DEV_MODEL_URL: model.url, MODEL_ID: "parley/dev" },
        inspectorPort,
      })
    : await platform(model.url, {}, { inspectorPort });
  try {
    // `fresh`: each profiled turn is a new session's first (its ticket, its object's start, its
    // lease), what 200 sessions of the concurrency benchmark each pay once.
    const open = fresh
      ? bare
        ? async () =>
            connectChat(
              `${worker.url}/agents/bare-chat-agent/profile-${Date.now()}-${Math.random()}`,
              {
                sendHistory: "last",
              },
            )
        : await (async () => {
            const { urls, token } = await assistantSessions(worker.url, turns + 10, {
              profile: chosen,
            });
            return async () => connectChat(urls.pop(), { token, sendHistory: "last" });
          })()
      : null;
    let client;
    if (bare) {
      client = await connectChat(`${worker.url}/agents/bare-chat-agent/profile-${Date.now()}`, {
        sendHistory: "last",
      });
    } else {
      const { urls, token } = await assistantSessions(worker.url, 1, { profile: chosen });
      client = await connectChat(urls[0], { token, sendHistory: "last" });
    }
    const turn = async (text) => {
      if (!open) return client.send(text).done;
      const one = await open();
      await one.send(text).done;
      one.close();
    };
    for (let i = 0; i < 10; i++) await turn(`warm-up turn ${i}`);
    const cdp = await inspector(inspectorPort);
    if (alloc) {
      await cdp.call("HeapProfiler.enable");
      await cdp.call("HeapProfiler.startSampling", {
        samplingInterval: 1024,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
      for (let i = 0; i < turns; i++) await turn(`profiled turn ${i}`);
      const { profile } = await cdp.call("HeapProfiler.stopSampling");
      cdp.close();
      client.close();
      const file = path.join(os.tmpdir(), `parley-${bare ? "bare" : "platform"}.heapprofile`);
      writeFileSync(file, JSON.stringify(profile));
      return `${summarizeAllocations(profile, turns)}\n\nWhole profile (open in Chrome DevTools): ${file}`;
    }
    await cdp.call("Profiler.enable");
    await cdp.call("Profiler.setSamplingInterval", { interval: 100 });
    await cdp.call("Profiler.start");
    for (let i = 0; i < turns; i++) await turn(`profiled turn ${i}`);
    const { profile } = await cdp.call("Profiler.stop");
    cdp.close();
    client.close();
    const file = path.join(os.tmpdir(), `parley-${bare ? "bare" : "platform"}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return `${summarizeProfile(profile, turns)}\n\nWhole profile (open in Chrome DevTools): ${file}`;
  } finally {
    worker.stop();
    await model.close();
  }
}
