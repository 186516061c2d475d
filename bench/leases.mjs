// One org, 500 sessions (issue 14): every session of one org runs its turns at once on the whole
// platform (bench/platform-worker.ts: the platform with a BillingAccount that counts the calls the
// agents make to it), dev model at zero latency in a process of its own. Counts BillingAccount
// calls per model step, and checks afterwards that every step was charged once.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { json, signUp, startModelProcess } from "./lib.mjs";
import { platform } from "./turns.mjs";

const SESSIONS = Number(process.env.BENCH_LEASE_SESSIONS ?? 500);
const TURNS = Number(process.env.BENCH_LEASE_TURNS ?? 12);
// This machine runs every session in one workerd process, about a minute between a session's
// turns (at model speed they are seconds apart): the idle return, the report timer and the
// lease's life are stretched so that a lease lives through a session's turns as it does at model
// speed (a lease renews at half its life: 5 minutes here would be a few turns).
const LEASE_IDLE_MS = 15 * 60_000;
const LEASE_FLUSH_MS = 60 * 60_000;
const LEASE_TTL_MS = 4 * 3600_000;
const GRANT_MICROS = 1_000_000_000_000;
const root = path.resolve(import.meta.dirname, "..");

/** At most `limit` of `tasks` at a time. */
async function pooled(items, limit, task) {
  const results = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await task(items[i], i);
      }
    }),
  );
  return results;
}

export async function benchLeases() {
  const config = path.join(root, ".bench-platform.jsonc");
  writeFileSync(
    config,
    readFileSync(path.join(root, "wrangler.jsonc"), "utf8").replace(
      '"main": "apps/worker/src/index.ts"',
      '"main": "bench/platform-worker.ts"',
    ),
  );
  const model = await startModelProcess({ latencyMs: 0, tokensPerSecond: 0 });
  const full = await platform(
    model.url,
    {
      SIGNUP_GRANT_MICROS: String(GRANT_MICROS),
      LEASE_IDLE_MS: String(LEASE_IDLE_MS),
      LEASE_FLUSH_MS: String(LEASE_FLUSH_MS),
      LEASE_TTL_MS: String(LEASE_TTL_MS),
    },
    { config },
  );
  try {
    const base = full.url;
    const { token, orgId, post } = await signUp(base, "leases");
    const project = await post(`/api/orgs/${orgId}/projects`, { name: "Leases" });
    const sessions = await pooled(Array.from({ length: SESSIONS }), 20, async () => {
      return (await post(`/api/projects/${project.id}/sessions`, {})).id;
    });
    const clients = await pooled(sessions, 50, (id) =>
      connectChat(`${base}/agents/assistant-agent/${id}`, { token, sendHistory: "last" }),
    );
    const calls = () => json(`${base}/api/__bench/billing-calls?org=${orgId}`);
    const before = await calls();
    const started = performance.now();
    let errors = 0;
    let steps = 0;
    await Promise.all(
      clients.map(async (client, i) => {
        for (let t = 0; t < TURNS; t++) {
          const result = await client.send(`turn ${t} of session ${i}`).done;
          if (result.error || result.outcome !== "completed") errors++;
          else steps++;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const afterTurns = await calls();
    for (const client of clients) client.close();
    // Every step charged once: reading the usage asks each session for what it holds back.
    const auth = { headers: { authorization: `Bearer ${token}` } };
    const read = () => json(`${base}/api/orgs/${orgId}/billing/usage?groupBy=session`, auth);
    const first = await read();
    const afterRead = await calls();
    // A read waits at most 2 s for the sessions' reports: under this load some come later, with
    // a later read's round (the exactness check below waits for them, up to a minute).
    let usage = first;
    for (let i = 0; i < 30 && usage.totals.requests < steps; i++) {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      usage = await read();
    }
    const balance = await json(`${base}/api/orgs/${orgId}/billing`, auth);
    const sum = (counts) => Object.values(counts).reduce((total, n) => total + n, 0);
    const made = Object.fromEntries(
      Object.keys(afterTurns).map((k) => [k, afterTurns[k] - before[k]]),
    );
    const total = sum(made);
    const readRound = sum(afterRead) - sum(afterTurns);
    // A failed turn (cut by the stall timeout) may still have made a call: it is charged too.
    const exact =
      usage.totals.requests >= steps &&
      usage.totals.requests <= steps + errors &&
      balance.postedMicros === GRANT_MICROS - usage.totals.priceMicros;
    const perStep = total / Math.max(1, steps);
    // The read's round, and each session's return of its lease once it idles (one call each).
    const withReturns = (total + readRound + SESSIONS) / Math.max(1, steps);
    return [
      "## One org, 500 sessions (issue 14)",
      "",
      `${SESSIONS} assistant sessions of one org, ${TURNS} turns each, all at once, on the whole platform`,
      "under wrangler dev (bench/platform-worker.ts counts the agents' calls to the org's BillingAccount:",
      "lease, reserve, settle, release), dev model at zero latency in its own process, over WebSockets",
      "from Node. Afterwards the org's usage must count every step once and the ledger add up.",
      `Idle return ${LEASE_IDLE_MS / 60_000} min, report timer ${LEASE_FLUSH_MS / 60_000} min and lease life ${LEASE_TTL_MS / 3600_000} h for this run (the defaults:`,
      "1 min, 5 min, 20 min): this machine runs every session in one workerd process, about a minute",
      "between a session's turns, where at model speed they are seconds apart, and a lease renews at",
      "half its life. Calls are counted from the first turn to the last answer; then the usage read",
      "asks every session to report (counted apart), and each session returns its lease when it",
      'idles, one call each: both are in "with the read and returns". A session opens its lease once',
      "and renews it about every 14 steps (a lease is one call's maximum and 16 expected calls).",
      "Target: at most 0.1 BillingAccount calls per model step. (Steps settled per second against",
      "reserve+settle pairs is measured on the account itself, under Billing: this machine runs every",
      "session in one process, so the platform's step rate here is the runtime's, not the account's.)",
      "",
      "| sessions | steps | errors | BillingAccount calls | of which lease / reserve / settle / release | calls per step | read's round | with the read and returns | steps/s | usage and ledger exact | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
      `| ${SESSIONS} | ${steps} | ${errors} | ${total} | ${made.lease} / ${made.reserve} / ${made.settle} / ${made.release} | ${perStep.toFixed(3)} | ${readRound} (first read saw ${first.totals.requests} steps) | ${withReturns.toFixed(3)} | ${Math.round(steps / seconds)} | ${exact ? "yes" : "NO"} | ${perStep <= 0.1 && errors === 0 && exact ? "met" : "MISSED"} |`,
    ].join("\n");
  } finally {
    full.stop();
    model.stop();
    rmSync(config, { force: true });
  }
}
