// Concurrency (issue 8, item 2): 200 assistant sessions x 5 turns across 20 orgs at once, the dev
// model streaming at a realistic rate from a process of its own, over real WebSockets from Node; then
// every transcript and every org's ledger is checked. The same load on the bare AIChatAgent, in the
// same run, shows what the runtime itself does with it on this machine.
import path from "node:path";
import { connectChat } from "../packages/chat-client/src/index.ts";
import { json, ms, signUp, startModelProcess, startWorker, summarize } from "./lib.mjs";
import { platform } from "./turns.mjs";

const ORGS = 20;
const SESSIONS_PER_ORG = 10;
const TURNS = 5;
const GRANT_MICROS = 5_000_000;
const root = path.resolve(import.meta.dirname, "..");

/** Opens every session at once and sends its turns one after another; times the first token. */
async function load(sessions) {
  const started = performance.now();
  const firsts = [];
  let errors = 0;
  const errorSamples = [];
  await Promise.all(
    sessions.map(async ({ url, token }) => {
      const client = await connectChat(url, { ...(token ? { token } : {}), sendHistory: "last" });
      for (let t = 0; t < TURNS; t++) {
        const result = await client.send(`turn ${t} of ${url.slice(-12)}`).done;
        if (result.error || result.outcome !== "completed" || result.firstTokenMs === null) {
          errors++;
          if (errorSamples.length < 5) errorSamples.push(result.error ?? result.outcome);
        } else {
          firsts.push(result.firstTokenMs);
        }
      }
      client.close();
    }),
  );
  return { firsts, errors, errorSamples, seconds: (performance.now() - started) / 1000 };
}

async function platformOrgs(base) {
  const orgs = [];
  for (let o = 0; o < ORGS; o++) {
    const { token, orgId, post } = await signUp(base, `load-${o}`);
    const project = await post(`/api/orgs/${orgId}/projects`, { name: "Load" });
    const sessions = [];
    for (let s = 0; s < SESSIONS_PER_ORG; s++) {
      sessions.push((await post(`/api/projects/${project.id}/sessions`, {})).id);
    }
    orgs.push({ orgId, token, sessions });
  }
  return orgs;
}

/** Nothing lost: each transcript holds every message; the ledger adds up to the micro-dollar. */
async function audit(base, orgs) {
  let lost = 0;
  let ledgerMismatches = 0;
  for (const org of orgs) {
    const auth = { headers: { authorization: `Bearer ${org.token}` } };
    for (const sessionId of org.sessions) {
      const messages = await json(`${base}/agents/assistant-agent/${sessionId}/get-messages`, auth);
      lost += Math.max(0, TURNS * 2 - messages.length);
    }
    const balance = await json(`${base}/api/orgs/${org.orgId}/billing`, auth);
    const usage = await json(`${base}/api/orgs/${org.orgId}/billing/usage?groupBy=session`, auth);
    // Held: what the sessions' leases still hold (returned when they idle), never lost credit.
    if (balance.postedMicros !== GRANT_MICROS - usage.totals.priceMicros) ledgerMismatches++;
  }
  return { lost, ledgerMismatches };
}

export async function benchConcurrency() {
  // About 60 tokens a second after 150 ms: a quick hosted model.
  const model = await startModelProcess({ latencyMs: 150, tokensPerSecond: 60 });
  const rows = [];
  const samples = [];
  try {
    const bare = await startWorker(
      path.join(root, "packages/chat-client/test/fixture/wrangler.jsonc"),
      { vars: { DEV_MODEL_URL: model.url, MODEL_ID: "parley/dev" }, readyPath: "/" },
    );
    try {
      const sessions = Array.from({ length: ORGS * SESSIONS_PER_ORG }, (_, i) => ({
        url: `${bare.url}/agents/bare-chat-agent/load-${Date.now()}-${i}`,
      }));
      const run = await load(sessions);
      rows.push({ label: "bare AIChatAgent (baseline)", run, audit: null });
    } finally {
      bare.stop();
    }

    const full = await platform(model.url);
    try {
      const orgs = await platformOrgs(full.url);
      const sessions = orgs.flatMap((org) =>
        org.sessions.map((id) => ({
          url: `${full.url}/agents/assistant-agent/${id}`,
          token: org.token,
        })),
      );
      const run = await load(sessions);
      rows.push({ label: "platform", run, audit: await audit(full.url, orgs) });
    } finally {
      full.stop();
    }
  } finally {
    model.stop();
  }

  const baseline = rows.find((row) => row.audit === null);
  const baseFirst = baseline ? summarize(baseline.run.firsts) : null;
  const lines = rows.map(({ label, run, audit }) => {
    const first = summarize(run.firsts);
    if (run.errorSamples.length > 0) samples.push(`${label}: ${run.errorSamples.join("; ")}`);
    const within =
      baseline !== undefined &&
      baseFirst !== null &&
      run.seconds <= 1.1 * baseline.run.seconds &&
      first.p99 <= 1.1 * baseFirst.p99;
    const verdict = audit
      ? run.errors === 0 && audit.lost === 0 && audit.ledgerMismatches === 0 && within
        ? "met"
        : "MISSED"
      : "-";
    return `| ${label} | ${ORGS * SESSIONS_PER_ORG * TURNS} | ${run.errors} | ${audit?.lost ?? "-"} | ${audit?.ledgerMismatches ?? "-"} | ${ms(first.p50)} | ${ms(first.p99)} | ${run.seconds.toFixed(1)} s | ${verdict} |`;
  });
  return [
    "## Concurrency (issues 8 and 14)",
    "",
    `${ORGS * SESSIONS_PER_ORG} assistant sessions x ${TURNS} turns across ${ORGS} orgs, all at once, dev model (its own`,
    "process) at 150 ms latency and 60 tokens/s, under wrangler dev, over WebSockets from Node. Afterwards",
    "every transcript is read back and every org's ledger is checked (posted = grant - usage charged;",
    "what is still held is the sessions' leases, returned as they idle). The same load on the bare",
    "AIChatAgent (no auth, no billing) runs first, in the same run. Target (issue 14): 0 errors, 0 lost,",
    "exact ledgers, and wall time and p99 time to first token each at most 1.1x the bare agent's.",
    "",
    "| agent | turns | errors | lost messages | orgs whose ledger does not add up | TTFT p50 | TTFT p99 | wall time | target |",
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ...lines,
    ...(samples.length > 0 ? ["", `Sample errors: ${samples.join(" / ")}`] : []),
  ].join("\n");
}
