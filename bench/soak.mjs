// Soak (issue 29): 40 sessions chatting for minutes, each reconnecting every 15 turns, on the
// platform and on the bare AIChatAgent in the same run, in alternating slices; workerd's resident
// memory (from /proc) sampled throughout, and its JS heap after a full GC read through the
// inspector at the start and the end. Afterwards every transcript is read back and every org's
// ledger checked, as the concurrency benchmark does.
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { inspector } from "./inspector.mjs";
import { freePort, json, signUp, startModelProcess, startWorker } from "./lib.mjs";
import { loadAverage, mib, rssBytes, workerdOf } from "./proc.mjs";
import { platform } from "./turns.mjs";

export const SOAK_SESSIONS = 40;
const ORGS = 10;
export const RECONNECT_EVERY = 15;
/** Each agent's turn alternates with the other's in slices this long. */
const SLICE_MS = 30_000;
/** Unmeasured chat on each agent before the first figure: JIT, objects made, caches filled. */
const WARM_UP_MS = 20_000;
const GRANT_MICROS = 1_000_000_000_000;
const root = path.resolve(import.meta.dirname, "..");

/**
 * The platform for a soak: a grant no soak spends, and access tokens that outlive the run (a
 * socket lives no longer than its token, and the clients hold one token each).
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

/** `count` sessions of the bare agent (its objects are made by the first connect). */
export function bareSessions(base, count = SOAK_SESSIONS) {
  const run = Date.now();
  return Array.from({ length: count }, (_, i) => ({
    url: `${base}/agents/bare-chat-agent/soak-${run}-${i}`,
  }));
}

/** `count` assistant sessions over `orgs` orgs, each org one member's with one project. */
export async function platformSessions(base, count = SOAK_SESSIONS, orgs = ORGS) {
  const sessions = [];
  const owners = [];
  for (let o = 0; o < orgs; o++) {
    const { token, orgId, post } = await signUp(base, `soak-${o}`);
    const project = await post(`/api/orgs/${orgId}/projects`, { name: "Soak" });
    owners.push({ orgId, token });
    for (let s = o; s < count; s += orgs) {
      const { id } = await post(`/api/projects/${project.id}/sessions`, {});
      sessions.push({ url: `${base}/agents/assistant-agent/${id}`, token, orgId });
    }
  }
  return { sessions, owners };
}

/**
 * One agent's side of the soak: its sessions, each with a client that reconnects every
 * `RECONNECT_EVERY` turns, and what they did.
 */
export function soakLoad(label, sessions) {
  const state = sessions.map((session) => ({ ...session, client: null, since: 0, sent: 0 }));
  const totals = { turns: 0, errors: 0, connects: 0, samples: [] };
  const fail = (why) => {
    totals.errors++;
    if (totals.samples.length < 5) totals.samples.push(why);
  };
  return {
    label,
    totals,
    /** Every session chats until `ms` have passed; a turn under way when they do is finished. */
    async run(ms) {
      const until = performance.now() + ms;
      await Promise.all(
        state.map(async (s) => {
          while (performance.now() < until) {
            if (s.client === null || s.since >= RECONNECT_EVERY) {
              await s.client?.close();
              s.client = null;
              try {
                s.client = await connectChat(s.url, {
                  ...(s.token ? { token: s.token } : {}),
                  sendHistory: "last",
                  reconnect: false,
                });
                s.since = 0;
                totals.connects++;
              } catch (error) {
                fail(`connect: ${error.message}`);
                await new Promise((r) => setTimeout(r, 1_000));
                continue;
              }
            }
            s.sent++;
            s.since++;
            const result = await s.client.send(`soak turn ${s.sent}`).done;
            if (result.error || result.outcome !== "completed") {
              fail(result.error ?? result.outcome);
              // A socket that failed a turn is replaced before the next one.
              s.since = RECONNECT_EVERY;
            } else totals.turns++;
          }
        }),
      );
    },
    async close() {
      await Promise.all(state.map((s) => s.client?.close()));
    },
    /** Messages missing from the stored transcripts: two per turn sent (a failed turn's too). */
    async lost() {
      let lost = 0;
      for (const s of state) {
        const headers = s.token ? { authorization: `Bearer ${s.token}` } : {};
        const messages = await json(`${s.url}/get-messages`, { headers });
        lost += Math.max(0, s.sent * 2 - messages.length);
      }
      return lost;
    },
  };
}

/** Orgs whose posted balance is not the grant less the usage charged (what leases hold aside). */
export async function ledgerMismatches(base, owners) {
  let mismatches = 0;
  for (const { orgId, token } of owners) {
    const auth = { headers: { authorization: `Bearer ${token}` } };
    const balance = await json(`${base}/api/orgs/${orgId}/billing`, auth);
    const usage = await json(`${base}/api/orgs/${orgId}/billing/usage?groupBy=session`, auth);
    if (balance.postedMicros !== GRANT_MICROS - usage.totals.priceMicros) mismatches++;
  }
  return mismatches;
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

/**
 * What a soak compares: how to start one side's worker (under wrangler dev, with the inspector on
 * `inspectorPort`) and make its sessions; `ledger` counts the orgs whose ledger does not add up.
 */
export const BARE = {
  key: "bare",
  label: "bare AIChatAgent (baseline)",
  async start(modelUrl, inspectorPort) {
    const worker = await soakBare(modelUrl, { inspectorPort });
    return { worker, sessions: bareSessions(worker.url), ledger: null };
  },
};

export const PLATFORM = {
  key: "platform",
  label: "platform",
  async start(modelUrl, inspectorPort) {
    const worker = await soakPlatform(modelUrl, { inspectorPort });
    const { sessions, owners } = await platformSessions(worker.url);
    return { worker, sessions, ledger: () => ledgerMismatches(worker.url, owners) };
  },
};

/**
 * Runs the soak's load on each variant in turn, in alternating slices, for `minutes` each after a
 * warm-up, and returns what was measured per variant (see `soakReport`).
 */
export async function soakCompare(
  variants,
  { minutes = 8, sliceMs = SLICE_MS, warmUpMs = WARM_UP_MS } = {},
) {
  const loadAtStart = loadAverage();
  const started = new Date().toISOString();
  const model = await startModelProcess({ latencyMs: 150, tokensPerSecond: 60 });
  const sides = [];
  try {
    for (const variant of variants) {
      const port = await freePort();
      const side = { variant, port, ...(await variant.start(model.url, port)) };
      sides.push(side);
      side.pid = workerdOf(side.worker.pid)?.runtime;
      if (!side.pid) throw new Error("no workerd process found under wrangler dev");
      side.load = soakLoad(variant.label, side.sessions);
    }
    // The JS heap still alive before any turn: a heap snapshot collects garbage first. Taken
    // before the warm-up, so what the snapshot itself allocates in workerd is not in the RSS
    // figures, which start after it.
    for (const side of sides) {
      const cdp = await inspector(side.port);
      side.heap0 = await cdp.heapAfterGc();
      cdp.close();
    }
    for (const side of sides) await side.load.run(warmUpMs);
    for (const side of sides) {
      side.start = { turns: side.load.totals.turns, rss: await steadyRss(side.pid) };
      side.samples = [];
      side.activeMs = 0;
    }
    let active = null;
    const sampler = setInterval(() => {
      for (const side of sides) {
        const rss = rssBytes(side.pid);
        if (rss !== null && active === side)
          side.samples.push({ x: side.load.totals.turns, y: rss });
      }
    }, 1_000);
    const slices = Math.max(1, Math.round((minutes * 60_000) / sliceMs));
    const slice = (minutes * 60_000) / slices;
    try {
      for (let i = 0; i < slices; i++) {
        // The order flips each slice, so no side always follows the same one.
        for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
          active = side;
          const t0 = performance.now();
          await side.load.run(slice);
          side.activeMs += performance.now() - t0;
          active = null;
        }
      }
    } finally {
      clearInterval(sampler);
    }
    for (const side of sides) {
      side.end = { turns: side.load.totals.turns, rss: await steadyRss(side.pid) };
    }
    for (const side of sides) {
      const cdp = await inspector(side.port);
      side.heap1 = await cdp.heapAfterGc();
      cdp.close();
    }
    for (const side of sides) await side.load.close();
    for (const side of sides) {
      side.lost = await side.load.lost();
      side.mismatches = side.ledger ? await side.ledger() : null;
    }
    return {
      minutes,
      sliceMs: slice,
      warmUpMs,
      started,
      loadAtStart,
      loadAtEnd: loadAverage(),
      sides: sides.map((side) => {
        const turns = side.end.turns - side.start.turns;
        return {
          label: side.variant.label,
          turns,
          allTurns: side.end.turns,
          perSecond: turns / (side.activeMs / 1000),
          errors: side.load.totals.errors,
          errorSamples: side.load.totals.samples,
          connects: side.load.totals.connects,
          lost: side.lost,
          mismatches: side.mismatches,
          rss0: side.start.rss,
          rss1: side.end.rss,
          peak: Math.max(side.start.rss, side.end.rss, ...side.samples.map((s) => s.y)),
          rssPerTurn: (side.end.rss - side.start.rss) / turns,
          rssSlope: slope(side.samples),
          heap0: side.heap0,
          heap1: side.heap1,
          heapPerTurn: (side.heap1 - side.heap0) / side.end.turns,
        };
      }),
    };
  } finally {
    for (const side of sides) side.worker.stop();
    model.stop();
  }
}

export async function benchSoak({ minutes = 8 } = {}) {
  return soakReport(await soakCompare([BARE, PLATFORM], { minutes }));
}

const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const mb = (bytes) => `${mib(bytes).toFixed(1)} MiB`;

/** One row per side of a soak, for a table with `soakHeader`. */
export function soakRows(result) {
  return result.sides.map(
    (s) =>
      `| ${s.label} | ${s.turns} | ${s.perSecond.toFixed(2)} | ${s.errors} | ${s.lost} | ${s.mismatches ?? "-"} | ${s.connects} | ${mb(s.rss0)} | ${mb(s.rss1)} | ${mb(s.peak)} | ${kib(s.rssPerTurn)} | ${s.rssSlope === null ? "-" : kib(s.rssSlope)} | ${mb(s.heap0)} | ${mb(s.heap1)} | ${kib(s.heapPerTurn)} |`,
  );
}

export const soakHeader = [
  "| agent | turns | turns/s | errors | lost messages | orgs whose ledger does not add up | connects | RSS at start | RSS at end | RSS peak | RSS growth per turn | RSS slope per turn | JS heap before the first turn | JS heap at end | JS heap growth per turn |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
];

export function soakReport(result) {
  const [b, p] = result.sides;
  const ratio = (x, y) => (y > 0 && x >= 0 ? `${(x / y).toFixed(2)}x` : "-");
  const growthMet = b.rssPerTurn > 0 && p.rssPerTurn <= 1.2 * b.rssPerTurn;
  const throughputMet = p.perSecond >= 0.95 * b.perSecond;
  const clean = b.errors + p.errors + p.lost + b.lost + (p.mismatches ?? 0) === 0;
  const samples = result.sides
    .filter((s) => s.errorSamples.length > 0)
    .map((s) => `${s.label}: ${s.errorSamples.join("; ")}`);
  return [
    "## Soak (issue 29)",
    "",
    `${SOAK_SESSIONS} sessions chatting without pause for ${result.minutes} min on each agent, each session closing its`,
    `socket and opening a new one every ${RECONNECT_EVERY} turns (the client reads the transcript on each connect, as`,
    "the web app does), dev model (its own process) at 150 ms latency and 60 tokens/s, under wrangler dev. The",
    `platform (${ORGS} orgs of ${SOAK_SESSIONS / ORGS} sessions) and the bare AIChatAgent run side by side in one invocation, each`,
    `in its own wrangler dev, and take turns in slices of ${(result.sliceMs / 1000).toFixed(0)} s (the order flips every slice), after`,
    `${result.warmUpMs / 1000} s of warm-up each; the idle one keeps its sockets open. Memory is the Worker's workerd process`,
    "(the one running the Worker and its Durable Objects, not wrangler's proxy): its resident set",
    "(`/proc/<pid>/status`, the median of five readings) after the warm-up and at the end, and every",
    'second in between ("slope": least squares of RSS over turns done, in the agent\'s own slices);',
    "the JS heap still alive (a heap snapshot through the inspector, which collects garbage first)",
    "before the first turn and at the end, per turn of the whole run. Throughput: turns per second of",
    "the agent's own slices. Afterwards every transcript is read back (two messages per turn sent) and",
    "every org's ledger is checked. Targets: RSS growth per turn at most 1.2x the bare agent's, throughput",
    "at least 0.95x, 0 errors, 0 lost, exact ledgers.",
    `Started ${result.started}; load average (1/5/15 min) ${result.loadAtStart} at the start, ${result.loadAtEnd} at the end.`,
    "",
    ...soakHeader,
    ...soakRows(result),
    "",
    "| platform / bare | ratio | target |",
    "| --- | --- | --- |",
    `| RSS growth per turn (start to end) | ${ratio(p.rssPerTurn, b.rssPerTurn)} | ${growthMet ? "met" : "MISSED"} (<= 1.2x) |`,
    `| RSS slope per turn | ${p.rssSlope === null || b.rssSlope === null ? "-" : ratio(p.rssSlope, b.rssSlope)} | - |`,
    `| JS heap growth per turn | ${ratio(p.heapPerTurn, b.heapPerTurn)} | - |`,
    `| throughput (turns/s) | ${ratio(p.perSecond, b.perSecond)} | ${throughputMet ? "met" : "MISSED"} (>= 0.95x) |`,
    `| errors, lost, ledgers | ${clean ? "0, 0, exact" : "see above"} | ${clean ? "met" : "MISSED"} |`,
    ...(samples.length > 0 ? ["", `Sample errors: ${samples.join(" / ")}`] : []),
  ].join("\n");
}
