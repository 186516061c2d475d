// Soak (issue 29): 40 sessions chatting for minutes, each reconnecting every 15 turns, on the
// platform and on the bare AIChatAgent in the same run, in alternating slices so the machine's
// noise hits both; workerd's resident memory (from /proc) read after each of an agent's slices with
// V8's heap size beside it (the rest is native memory), its CPU over them, and its JS heap after a
// full GC through the inspector at the end (a snapshot, after every RSS reading). Afterwards every
// transcript is read back and every org's ledger checked.
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { inspector } from "./inspector.mjs";
import { freePort, startModelProcess, startWorker } from "./lib.mjs";
import { cpuWindow, loadAverage, mib, rssBytes, workerdOf } from "./proc.mjs";
import { bareSessions, ledgerMismatches, lostMessages, platformSessions } from "./sessions.mjs";
import { platform } from "./turns.mjs";

export const SOAK_SESSIONS = 40;
/** Platform sessions per org: 40 sessions are 10 orgs. */
const PER_ORG = 4;
export const RECONNECT_EVERY = 15;
/** Each agent's chat alternates with the other's in slices this long. */
const SLICE_MS = 30_000;
/** Unmeasured chat on each agent before the first figure: JIT, objects made, caches filled. */
const WARM_UP_MS = 20_000;
const GRANT_MICROS = 1_000_000_000_000;
/**
 * The longest soak: the clients hold one access token each (a socket lives no longer than its
 * token), and the platform's longest token life is an hour, for both agents' minutes and the setup.
 */
export const MAX_SOAK_MINUTES = 25;
const root = path.resolve(import.meta.dirname, "..");

/**
 * The platform for a soak: a grant no soak spends and access tokens that outlive the run.
 * `options` go to `startWorker` (the inspector port, `traced`).
 */
export function soakPlatform(modelUrl, options = {}) {
  return platform(
    modelUrl,
    { SIGNUP_GRANT_MICROS: String(GRANT_MICROS), ACCESS_TOKEN_TTL_SECONDS: "3600" },
    options,
  );
}

export function soakBare(modelUrl, options = {}) {
  return startWorker(path.join(root, "packages/chat-client/test/fixture/wrangler.jsonc"), {
    vars: { DEV_MODEL_URL: modelUrl, MODEL_ID: "parley/dev" },
    readyPath: "/",
    ...options,
  });
}

/** The soak's sessions on the agent at `base`, and the orgs to audit (none for the bare agent). */
export async function soakSessions(kind, base, count = SOAK_SESSIONS) {
  if (kind === "bare") return { sessions: bareSessions(base, count, "soak"), orgs: [] };
  return platformSessions(base, count, { perOrg: PER_ORG, label: "soak" });
}

/**
 * One agent's side of the soak: a client per session that reconnects every `RECONNECT_EVERY` turns
 * (each connect reads the transcript, as the web app does), and what they did. `sent` on each
 * session counts its turns for `lostMessages`.
 */
export function soakLoad(sessions) {
  const clients = sessions.map((session) => ({ session, client: null, since: 0 }));
  const totals = { turns: 0, errors: 0, connects: 0, samples: [] };
  const fail = (why) => {
    totals.errors++;
    if (totals.samples.length < 5) totals.samples.push(why);
  };
  return {
    totals,
    /** Every session chats without pause until `ms` have passed; a turn under way then is finished. */
    async run(ms) {
      const until = performance.now() + ms;
      await Promise.all(
        clients.map(async (c) => {
          const { url, token } = c.session;
          while (performance.now() < until) {
            if (c.client === null || c.since >= RECONNECT_EVERY) {
              await c.client?.close();
              c.client = null;
              try {
                c.client = await connectChat(url, {
                  ...(token ? { token } : {}),
                  sendHistory: "last",
                  reconnect: false,
                });
                c.since = 0;
                totals.connects++;
              } catch (error) {
                fail(`connect: ${error.message}`);
                await new Promise((r) => setTimeout(r, 1_000));
                continue;
              }
            }
            c.session.sent++;
            c.since++;
            const result = await c.client.send(`soak turn ${c.session.sent}`).done;
            if (result.error || result.outcome !== "completed") {
              fail(result.error ?? result.outcome);
              // A socket that failed a turn is replaced before the next one.
              c.since = RECONNECT_EVERY;
            } else totals.turns++;
          }
        }),
      );
    },
    async close() {
      await Promise.all(clients.map((c) => c.client?.close()));
    },
  };
}

/** Least-squares slope of y over x (bytes per turn), or null with fewer than two x values. */
function slope(points) {
  const n = points.length;
  if (n < 2) return null;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? null : num / den;
}

/** RSS of `pid` as the median of five readings 200 ms apart (one reading is a GC's moment). */
async function steadyRss(pid) {
  const readings = [];
  for (let i = 0; i < 5; i++) {
    readings.push(rssBytes(pid));
    await new Promise((r) => setTimeout(r, 200));
  }
  return readings.sort((a, b) => a - b)[2];
}

/** The JS heap alive in the Worker's isolate (a heap snapshot collects garbage first), in bytes. */
async function liveHeap(port) {
  const cdp = await inspector(port);
  try {
    return await cdp.heapAfterGc();
  } finally {
    cdp.close();
  }
}

/**
 * V8's heap as it stands (`Runtime.getHeapUsage`: no collection, no snapshot): `size`, what the
 * isolate has committed for its heap, part of the RSS; the rest of the RSS is native memory
 * (SQLite, sockets, buffers: the runtime's allocator).
 */
async function v8Heap(port) {
  const cdp = await inspector(port);
  try {
    const { usedSize, totalSize } = await cdp.call("Runtime.getHeapUsage");
    return { used: usedSize, size: totalSize };
  } finally {
    cdp.close();
  }
}

export const SIDES = [
  { kind: "bare", label: "bare AIChatAgent (baseline)", start: soakBare },
  { kind: "platform", label: "platform", start: soakPlatform },
];

/**
 * Runs the soak's load on each side in alternating slices, `minutes` each after a warm-up of each,
 * and returns what was measured per side (see `soakReport`). `traced` keeps wrangler's local trace
 * store on (lib.mjs `startWorker`).
 */
export async function soakCompare({
  minutes = 8,
  sessions = SOAK_SESSIONS,
  traced = false,
  sliceMs = SLICE_MS,
  warmUpMs = WARM_UP_MS,
} = {}) {
  if (minutes > MAX_SOAK_MINUTES) {
    throw new Error(`a soak runs at most ${MAX_SOAK_MINUTES} minutes (the clients' tokens)`);
  }
  const loadAtStart = loadAverage();
  const started = new Date().toISOString();
  const model = await startModelProcess({ latencyMs: 150, tokensPerSecond: 60 });
  const sides = [];
  try {
    for (const spec of SIDES) {
      const port = await freePort();
      const worker = await spec.start(model.url, { inspectorPort: port, traced });
      const side = { ...spec, port, worker };
      sides.push(side);
      side.pid = workerdOf(worker.pid)?.runtime;
      if (!side.pid) throw new Error("no workerd process found under wrangler dev");
      Object.assign(side, await soakSessions(spec.kind, worker.url, sessions));
      side.load = soakLoad(side.sessions);
      side.points = [];
      side.cpu = 0;
      side.activeMs = 0;
    }
    // No heap snapshot before the last RSS reading: a snapshot makes workerd allocate hundreds of
    // MiB of native memory (measured: 74 -> 463 MiB RSS for a 15 MiB heap), which its allocator
    // keeps and hands back at its own pace, so every RSS reading after one measured the
    // allocator's release, not the agent (docs/2026-12-06-soak-memory.md). V8's own figure before
    // the first turn instead (it counts garbage not yet collected).
    for (const side of sides) side.heap0 = (await v8Heap(side.port)).used;
    // Each side's RSS is read right after each of its own runs (the warm-up, then every slice), so
    // every reading of both comes at the same moment of the agent's cycle; with it V8's committed
    // heap, to tell the heap's capacity from native memory.
    const read = async (side) => {
      const rss = await steadyRss(side.pid);
      const { size } = await v8Heap(side.port);
      side.points.push({ x: side.load.totals.turns, y: rss, v8: size });
    };
    for (const side of sides) {
      await side.load.run(warmUpMs);
      await read(side);
    }
    const slices = Math.max(1, Math.round((minutes * 60_000) / sliceMs));
    const slice = (minutes * 60_000) / slices;
    for (let i = 0; i < slices; i++) {
      // The order flips each slice, so neither side always follows the other.
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        const cpu = cpuWindow(side.pid);
        await side.load.run(slice);
        const used = cpu.stop();
        side.cpu += used.cpu;
        side.activeMs += used.seconds * 1000;
        await read(side);
        // The heap at the end, right after the agent's own last slice and its last RSS reading (a
        // snapshot's native memory must not reach an RSS figure): an idle agent's objects
        // hibernate (workerd evicts an object 10 s after its last event), and their transcripts
        // leave its heap.
        if (i === slices - 1) side.heap1 = await liveHeap(side.port);
      }
    }
    for (const side of sides) await side.load.close();
    for (const side of sides) {
      side.lost = await lostMessages(side.sessions);
      side.mismatches =
        side.kind === "bare"
          ? null
          : await ledgerMismatches(side.worker.url, side.orgs, GRANT_MICROS);
    }
    return {
      minutes,
      sessions,
      traced,
      sliceMs: slice,
      warmUpMs,
      started,
      loadAtStart,
      loadAtEnd: loadAverage(),
      sides: sides.map((side) => summarizeSide(side)),
    };
  } finally {
    for (const side of sides) side.worker.stop();
    model.stop();
  }
}

function summarizeSide(side) {
  const first = side.points[0];
  const last = side.points.at(-1);
  const turns = last.x - first.x;
  return {
    kind: side.kind,
    label: side.label,
    turns,
    perSecond: turns / (side.activeMs / 1000),
    cpuPerTurn: side.cpu / turns,
    cpuShare: side.cpu / (side.activeMs / 1000),
    errors: side.load.totals.errors,
    errorSamples: side.load.totals.samples,
    connects: side.load.totals.connects,
    lost: side.lost,
    mismatches: side.mismatches,
    rss0: first.y,
    rss1: last.y,
    peak: Math.max(...side.points.map((p) => p.y)),
    rssPerTurn: (last.y - first.y) / turns,
    rssSlope: slope(side.points),
    v8PerTurn: (last.v8 - first.v8) / turns,
    nativePerTurn: (last.y - last.v8 - (first.y - first.v8)) / turns,
    heap0: side.heap0,
    heap1: side.heap1,
    heapPerTurn: (side.heap1 - side.heap0) / last.x,
  };
}

export async function benchSoak(options = {}) {
  return soakReport(await soakCompare(options));
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const mb = (bytes) => `${mib(bytes).toFixed(1)} MiB`;

/**
 * Growth per turn of the platform against the bare agent's: a ratio while the bare agent grows;
 * when it does not, the platform meets the target only by not growing either.
 */
function growthVerdict(platformPerTurn, barePerTurn) {
  if (barePerTurn > 0) {
    const ratio = platformPerTurn / barePerTurn;
    return { text: `${ratio.toFixed(2)}x`, met: ratio <= 1.2 };
  }
  return { text: "- (the bare agent did not grow)", met: platformPerTurn <= 0 };
}

export function soakReport(result) {
  const [b, p] = result.sides;
  const growth = growthVerdict(p.rssPerTurn, b.rssPerTurn);
  const throughput = p.perSecond / b.perSecond;
  const clean = b.errors + p.errors + p.lost + b.lost + (p.mismatches ?? 0) === 0;
  const samples = result.sides
    .filter((s) => s.errorSamples.length > 0)
    .map((s) => `${s.label}: ${s.errorSamples.join("; ")}`);
  const ratio = (x, y) => (x === null || y === null || y <= 0 ? "-" : `${(x / y).toFixed(2)}x`);
  const rows = result.sides.map(
    (s) =>
      `| ${s.label} | ${s.turns} | ${s.perSecond.toFixed(2)} | ${s.errors} | ${s.lost} | ${s.mismatches ?? "-"} | ${s.connects} | ${(s.cpuShare * 100).toFixed(0)}% | ${(s.cpuPerTurn * 1000).toFixed(1)} ms | ${mb(s.rss0)} | ${mb(s.rss1)} | ${mb(s.peak)} | ${kib(s.rssPerTurn)} | ${s.rssSlope === null ? "-" : kib(s.rssSlope)} | ${kib(s.v8PerTurn)} | ${kib(s.nativePerTurn)} | ${mb(s.heap0)} | ${mb(s.heap1)} | ${kib(s.heapPerTurn)} |`,
  );
  const orgs = Math.ceil(result.sessions / PER_ORG);
  return [
    "## Soak (issue 29)",
    "",
    `${result.sessions} sessions chatting without pause for ${result.minutes} min on each agent, each session closing its`,
    `socket and opening a new one every ${RECONNECT_EVERY} turns (the client reads the transcript on each connect, as`,
    "the web app does), dev model (its own process) at 150 ms latency and 60 tokens/s, under wrangler dev",
    result.traced
      ? "with its local trace store on (`traced`: every span of both Workers kept in their workerd process)."
      : "with its local trace store off for both (bench/lib.mjs `startWorker`: it keeps every span in the measured process; see docs/2026-12-06-soak-memory.md).",
    `The platform (${orgs} orgs of ${PER_ORG} sessions) and the bare AIChatAgent run side by side in one invocation, each in`,
    `its own wrangler dev, and take turns in slices of ${(result.sliceMs / 1000).toFixed(0)} s (the order flips every slice), after`,
    `${result.warmUpMs / 1000} s of warm-up each; the idle one keeps its sockets open (its objects hibernate). Memory is the Worker's workerd process`,
    "(the one running the Worker and its Durable Objects, not wrangler's proxy): its resident set",
    "(`/proc/<pid>/status`, the median of five readings) right after the agent's warm-up and after each",
    'of its slices; growth per turn from the first reading to the last ("slope": least squares over',
    "all of them), split into V8's committed heap (`Runtime.getHeapUsage`, read with each RSS) and the rest, native",
    "memory. The JS heap alive at the end (a heap snapshot, which collects garbage first, after the agent's last",
    "RSS reading: a snapshot leaves hundreds of MiB of native memory behind, so none is taken before) against V8's",
    "heap in use before the first turn (garbage included: growth is a lower bound; `pnpm bench heap` compares",
    "snapshots). Throughput and CPU",
    "(workerd's, from `/proc/<pid>/stat`) over the agent's own slices. Afterwards every transcript is",
    "read back (two messages per turn sent) and every org's ledger is checked. Targets: RSS growth per",
    "turn at most 1.2x the bare agent's, throughput at least 0.95x, 0 errors, 0 lost, exact ledgers.",
    `Started ${result.started}; load average (1/5/15 min) ${result.loadAtStart} at the start, ${result.loadAtEnd} at the end.`,
    "",
    "| agent | turns | turns/s | errors | lost messages | orgs whose ledger does not add up | connects | workerd CPU (of one core) | workerd CPU per turn | RSS after warm-up | RSS at end | RSS peak | RSS growth per turn | RSS slope per turn | of it, V8 heap size | of it, native | JS heap used before the first turn (V8, not collected) | JS heap alive at end | JS heap growth per turn (at least) |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    "| platform / bare | ratio | target |",
    "| --- | --- | --- |",
    `| RSS growth per turn (first reading to last) | ${growth.text} | ${growth.met ? "met" : "MISSED"} (<= 1.2x) |`,
    `| RSS slope per turn | ${ratio(p.rssSlope, b.rssSlope)} | - |`,
    `| of it, V8 heap size per turn | ${ratio(p.v8PerTurn, b.v8PerTurn)} | - |`,
    `| of it, native memory per turn | ${ratio(p.nativePerTurn, b.nativePerTurn)} | - |`,
    `| JS heap growth per turn (at least) | ${ratio(p.heapPerTurn, b.heapPerTurn)} | - |`,
    `| workerd CPU per turn | ${ratio(p.cpuPerTurn, b.cpuPerTurn)} | - |`,
    `| throughput (turns/s) | ${throughput.toFixed(2)}x | ${throughput >= 0.95 ? "met" : "MISSED"} (>= 0.95x) |`,
    `| errors, lost, ledgers | ${clean ? "0, 0, exact" : "see above"} | ${clean ? "met" : "MISSED"} |`,
    ...(samples.length > 0 ? ["", `Sample errors: ${samples.join(" / ")}`] : []),
  ].join("\n");
}
