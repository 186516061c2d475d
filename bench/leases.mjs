// One org, 500 sessions (issue 14): every session of one org runs its turns at once on the whole
// platform (bench/platform-worker.ts: the platform with a BillingAccount that counts the calls the
// agents make to it), dev model at zero latency in a process of its own. Counts BillingAccount
// calls per model step, and checks afterwards that every step was charged once.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { json, signUp, startModelProcess } from "./lib.mjs";
import { platform } from "./turns.mjs";

const SESSIONS = 500;
const TURNS = 12;
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
  const full = await platform(model.url, { SIGNUP_GRANT_MICROS: String(GRANT_MICROS) }, { config });
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
    const after = await calls();
    for (const client of clients) client.close();
    const made = Object.fromEntries(Object.keys(after).map((k) => [k, after[k] - before[k]]));
    const total = Object.values(made).reduce((sum, n) => sum + n, 0);
    // Every step charged once: reading the usage asks each session for what it holds back.
    const auth = { headers: { authorization: `Bearer ${token}` } };
    const usage = await json(`${base}/api/orgs/${orgId}/billing/usage?groupBy=session`, auth);
    const balance = await json(`${base}/api/orgs/${orgId}/billing`, auth);
    // A failed turn (cut by the stall timeout) may still have made a call: it is charged too.
    const exact =
      usage.totals.requests >= steps &&
      usage.totals.requests <= steps + errors &&
      balance.postedMicros === GRANT_MICROS - usage.totals.priceMicros;
    const perStep = total / Math.max(1, steps);
    return [
      "## One org, 500 sessions (issue 14)",
      "",
      `${SESSIONS} assistant sessions of one org, ${TURNS} turns each, all at once, on the whole platform`,
      "under wrangler dev (bench/platform-worker.ts counts the agents' calls to the org's BillingAccount:",
      "lease, reserve, settle, release), dev model at zero latency in its own process, over WebSockets",
      "from Node. Afterwards the org's usage must count every step once and the ledger add up.",
      "Target: at most 0.1 BillingAccount calls per model step. (Steps settled per second against",
      "reserve+settle pairs is measured on the account itself, under Billing: this machine runs every",
      "session in one process, so the platform's step rate here is the runtime's, not the account's.)",
      "",
      "| sessions | steps | errors | BillingAccount calls | of which lease / reserve / settle / release | calls per step | steps/s | usage and ledger exact | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
      `| ${SESSIONS} | ${steps} | ${errors} | ${total} | ${made.lease} / ${made.reserve} / ${made.settle} / ${made.release} | ${perStep.toFixed(3)} | ${Math.round(steps / seconds)} | ${exact ? "yes" : "NO"} | ${perStep <= 0.1 && errors === 0 && exact ? "met" : "MISSED"} |`,
    ].join("\n");
  } finally {
    full.stop();
    model.stop();
    rmSync(config, { force: true });
  }
}
