// Billing benchmark (issue 3): reserve+settle pairs per second on one BillingAccount, driven over
// RPC from a Worker as the agents drive it, and each usage grouping over 100,000 usage events.
import path from "node:path";
import { ms, startWorker, summarize } from "./lib.mjs";

export async function benchBilling() {
  const worker = await startWorker(path.join(import.meta.dirname, "billing-wrangler.jsonc"), {
    readyPath: "/open",
  });
  const get = async (p) => {
    const res = await fetch(`${worker.url}${p}`);
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  try {
    await get("/open");
    await get("/pairs?n=300&parallel=4&run=warm");
    // The floor under this runtime: a no-op RPC, and an RPC that commits one SQLite write.
    const floors = [];
    for (const kind of ["ping", "write"]) {
      const n = 2000;
      const start = performance.now();
      await get(`/${kind}?n=${n}&parallel=8`);
      floors.push({ kind, perSecond: Math.round(n / ((performance.now() - start) / 1000)) });
    }
    const pairs = [];
    for (const parallel of [1, 8]) {
      const n = 3000;
      const result = await get(`/pairs?n=${n}&parallel=${parallel}&run=p${parallel}`);
      const seconds = result.ms / 1000;
      if (result.failures !== 0 || !result.reconciled)
        throw new Error(`pairs failed: ${JSON.stringify(result)}`);
      pairs.push({ parallel, n, perSecond: Math.round(n / seconds) });
    }
    // The same account settling model steps the way leases do: 500 sessions, each reporting its
    // calls 16 at a time with a renewal (issue 14), against the pairs above in the same run.
    const leaseRuns = [];
    for (const [sessions, batch] of [
      [500, 16],
      [500, 1],
    ]) {
      const n = 16_000;
      const result = await get(`/leases?n=${n}&sessions=${sessions}&batch=${batch}&run=b${batch}`);
      const seconds = result.ms / 1000;
      if (result.failures !== 0 || !result.reconciled)
        throw new Error(`leases failed: ${JSON.stringify(result)}`);
      leaseRuns.push({
        sessions,
        batch,
        n,
        calls: result.calls,
        perSecond: Math.round(n / seconds),
      });
    }
    const groupings = [];
    for (const sessions of ["tasks", "everyday"]) {
      const org = `seed-${sessions}`;
      await get(`/seed?n=100000&sessions=${sessions}&org=${org}`);
      for (const groupBy of ["day", "model", "member", "project", "session"]) {
        await get(`/usage?groupBy=${groupBy}&org=${org}`);
        const samples = [];
        let answer;
        for (let i = 0; i < 9; i++) {
          const start = performance.now();
          answer = await get(`/usage?groupBy=${groupBy}&org=${org}`);
          samples.push(performance.now() - start);
        }
        if (answer.requests !== 100000)
          throw new Error(`grouping lost events: ${JSON.stringify(answer)}`);
        groupings.push({ sessions, groupBy, ...summarize(samples), groups: answer.groups });
      }
    }
    const lines = [
      "## Billing (issues 3 and 14)",
      "",
      "Reserve+settle pairs on one BillingAccount, each pair two RPC calls from a Worker (as an agent made",
      "them before leases), timed in the Worker from the first call to the last answer; the ledger is",
      "reconciled afterwards (not timed).",
      "",
      "| concurrent callers | pairs | pairs/s |",
      "| --- | --- | --- |",
      ...pairs.map((p) => `| ${p.parallel} | ${p.n} | ${p.perSecond} |`),
      "",
      `For scale, in the same run: ${floors.map((f) => `${f.perSecond} ${f.kind === "ping" ? "no-op RPCs/s" : "one-write RPCs/s"}`).join(", ")}`,
      "(8 concurrent callers).",
      "",
      "Model steps settled through session leases on the same account (issue 14): 500 sessions, each",
      "holding a lease and reporting its settled calls in batches with a renewal (`BillingAccount.lease`),",
      "as agents do, from opening the lease to returning it; 16,000 steps, timed and reconciled the",
      "same way. Target: with batches of 16 (a lease's grant), at least 10x the best pairs/s above.",
      "",
      "| sessions | calls per report | steps | account calls | account calls per step | steps/s | x pairs/s | target |",
      "| --- | --- | --- | --- | --- | --- | --- | --- |",
      ...leaseRuns.map((l) => {
        const best = Math.max(...pairs.map((p) => p.perSecond));
        const ratio = l.perSecond / best;
        const target = l.batch === 16 ? (ratio >= 10 ? "met" : "MISSED") : "-";
        return `| ${l.sessions} | ${l.batch} | ${l.n} | ${l.calls} | ${(l.calls / l.n).toFixed(3)} | ${l.perSecond} | ${ratio.toFixed(1)} | ${target} |`;
      }),
      "",
      "Usage grouping over 100,000 usage events (30 days, 5 models, 50 members, 20 projects, 2,000 sessions),",
      "one round trip through the Worker to the BillingAccount, 9 runs after a warm-up, every event counted.",
      "`tasks`: each session's events within one day (a session is one task); `everyday`: every session",
      "active on every day, the worst case for the per-session rollup. Target: at most 50 ms.",
      "",
      "| sessions | groupBy | groups | p50 | min | max | target |",
      "| --- | --- | --- | --- | --- | --- | --- |",
      ...groupings.map(
        (g) =>
          `| ${g.sessions} | ${g.groupBy} | ${g.groups} | ${ms(g.p50)} | ${ms(g.min)} | ${ms(g.max)} | ${g.p50 <= 50 ? "met" : "MISSED"} (<= 50 ms) |`,
      ),
    ];
    return lines.join("\n");
  } finally {
    worker.stop();
  }
}
