// Concurrency (issue 8, item 2): 200 assistant sessions x 5 turns across 20 orgs at once, the dev
// model streaming at a realistic rate, over real WebSockets from Node; then every transcript and
// every org's ledger is checked.
import { connectChat } from "../packages/chat-client/src/index.ts";
import { startDevModel } from "../packages/dev-model/src/index.ts";
import { ms, summarize } from "./lib.mjs";
import { platform } from "./turns.mjs";

const ORGS = 20;
const SESSIONS_PER_ORG = 10;
const TURNS = 5;
const GRANT_MICROS = 5_000_000;

async function json(url, init) {
  const res = await fetch(url, init);
  if (!res.ok)
    throw new Error(`${init?.method ?? "GET"} ${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

export async function benchConcurrency() {
  // About 60 tokens a second after 150 ms: a quick hosted model.
  const model = await startDevModel({ port: 0, latencyMs: 150, tokensPerSecond: 60 });
  const full = await platform(model.url);
  const base = full.url;
  try {
    const orgs = [];
    for (let o = 0; o < ORGS; o++) {
      const post = (p, body, token) =>
        json(`${base}${p}`, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            ...(token ? { authorization: `Bearer ${token}` } : {}),
          },
          body: JSON.stringify(body),
        });
      const { accessToken } = await post("/api/auth/signup", {
        email: `load-${o}-${Date.now()}@example.test`,
        password: "benchmark password",
        name: `Load ${o}`,
      });
      const list = await json(`${base}/api/orgs`, {
        headers: { authorization: `Bearer ${accessToken}` },
      });
      const orgId = list.items[0].id;
      const project = await post(`/api/orgs/${orgId}/projects`, { name: "Load" }, accessToken);
      const sessions = [];
      for (let s = 0; s < SESSIONS_PER_ORG; s++) {
        sessions.push((await post(`/api/projects/${project.id}/sessions`, {}, accessToken)).id);
      }
      orgs.push({ orgId, token: accessToken, sessions });
    }

    const started = performance.now();
    const firsts = [];
    let errors = 0;
    const errorSamples = [];
    await Promise.all(
      orgs.flatMap((org) =>
        org.sessions.map(async (sessionId) => {
          const client = await connectChat(`${base}/agents/assistant-agent/${sessionId}`, {
            token: org.token,
            sendHistory: "last",
          });
          for (let t = 0; t < TURNS; t++) {
            const result = await client.send(`turn ${t} of session ${sessionId}`).done;
            if (result.error || result.outcome !== "completed" || result.firstTokenMs === null) {
              errors++;
              if (errorSamples.length < 5) errorSamples.push(result.error ?? result.outcome);
            } else {
              firsts.push(result.firstTokenMs);
            }
          }
          client.close();
        }),
      ),
    );
    const seconds = (performance.now() - started) / 1000;

    // Nothing lost: each transcript holds every message; the ledger adds up to the micro-dollar.
    let lost = 0;
    let ledgerMismatches = 0;
    for (const org of orgs) {
      const auth = { headers: { authorization: `Bearer ${org.token}` } };
      for (const sessionId of org.sessions) {
        const messages = await json(
          `${base}/agents/assistant-agent/${sessionId}/get-messages`,
          auth,
        );
        lost += Math.max(0, TURNS * 2 - messages.length);
      }
      const balance = await json(`${base}/api/orgs/${org.orgId}/billing`, auth);
      const usage = await json(`${base}/api/orgs/${org.orgId}/billing/usage?groupBy=session`, auth);
      if (
        balance.heldMicros !== 0 ||
        balance.postedMicros !== GRANT_MICROS - usage.totals.priceMicros
      ) {
        ledgerMismatches++;
      }
    }
    const first = summarize(firsts);
    return [
      "## Concurrency (issue 8)",
      "",
      `${ORGS * SESSIONS_PER_ORG} assistant sessions x ${TURNS} turns across ${ORGS} orgs, all at once, dev model at`,
      "150 ms latency and 60 tokens/s, under wrangler dev, over WebSockets from Node. Afterwards every",
      "transcript is read back and every org's ledger is checked (posted = grant - usage charged, nothing held).",
      "Target: 0 errors, 0 lost, exact ledger, p99 time to first token at most 250 ms.",
      "",
      "| turns | errors | lost messages | orgs whose ledger does not add up | TTFT p50 | TTFT p99 | wall time | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      `| ${ORGS * SESSIONS_PER_ORG * TURNS} | ${errors} | ${lost} | ${ledgerMismatches} | ${ms(first.p50)} | ${ms(first.p99)} | ${seconds.toFixed(1)} s | ${errors === 0 && lost === 0 && ledgerMismatches === 0 && first.p99 <= 250 ? "met" : "MISSED"} |`,
      ...(errorSamples.length > 0
        ? ["", `Sample errors: ${errorSamples.map((e) => JSON.stringify(e)).join("; ")}`]
        : []),
    ].join("\n");
  } finally {
    full.stop();
    await model.close();
  }
}
