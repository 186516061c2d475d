// Bench-only Worker: the production BillingAccount, plus a seeding method and endpoints that drive
// it from a Worker over RPC, as the agents do. Not deployed; `pnpm bench` runs it under wrangler dev.
import type { LeaseUsage } from "@parley/billing";
import { BillingAccount, usageGroups } from "../apps/worker/src/billing/billing-account.ts";

export class BenchBillingAccount extends BillingAccount {
  ping(): number {
    return 1;
  }

  write(i: number): number {
    this.ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS bench_w (i INTEGER)");
    this.ctx.storage.sql.exec("INSERT INTO bench_w VALUES (?)", i);
    return i;
  }

  /**
   * Inserts `count` settled usage events over 30 days, 5 models, 50 members, 20 projects, 2,000
   * sessions. `sessions`: "tasks" puts each session's events within one day (a session is one task);
   * "everyday" spreads every session over every day, the worst case for the per-session rollup.
   */
  seed(count: number, sessions: "tasks" | "everyday"): number {
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      for (let i = 0; i < count; i++) {
        const session = sessions === "tasks" ? Math.floor((i * 2000) / count) : i % 2000;
        const minutesAgo =
          sessions === "tasks" ? (session % 30) * 24 * 60 + (i % (20 * 60)) : i % (30 * 24 * 60);
        this.ctx.storage.sql.exec(
          `INSERT INTO usage_events (request_id, member_id, project_id, session_id, model, prompt_tokens, completion_tokens,
             cached_prompt_tokens, reasoning_tokens, cost_micros, price_micros, billable, generation_ids, outcome, hold_micros, created_at)
           VALUES (?, ?, ?, ?, ?, 500, 200, 0, 0, 900, 1000, 1, '[]', 'settled', 1000, ?)`,
          `seed-${i}`,
          `usr_${session % 50}`,
          `prj_${session % 20}`,
          `ses_${session}`,
          `model/${i % 5}`,
          now - minutesAgo * 60_000,
        );
      }
    });
    return count;
  }
}

interface BenchEnv {
  BILLING: DurableObjectNamespace<BenchBillingAccount>;
}

export default {
  async fetch(request: Request, env: BenchEnv): Promise<Response> {
    const url = new URL(request.url);
    const org = url.searchParams.get("org") ?? "bench";
    const stub = env.BILLING.get(env.BILLING.idFromName(org));
    if (url.pathname === "/open") {
      await stub.open({ orgId: org, grantMicros: 1_000_000_000_000 });
      return Response.json({ ok: true });
    }
    if (url.pathname === "/pairs") {
      // `parallel` loops, each reserving then settling `n / parallel` requests in turn.
      const n = Number(url.searchParams.get("n") ?? 1000);
      const parallel = Number(url.searchParams.get("parallel") ?? 1);
      const run = url.searchParams.get("run") ?? "r";
      let failures = 0;
      // Timed here, without the reconciliation after it (the Worker's clock moves across I/O).
      const start = Date.now();
      await Promise.all(
        Array.from({ length: parallel }, async (_, loop) => {
          for (let i = loop; i < n; i += parallel) {
            const requestId = `${run}-${i}`;
            const hold = await stub.reserve({
              requestId,
              amountMicros: 5_000,
              memberId: "usr_bench",
              projectId: "prj_bench",
              sessionId: "ses_bench",
            });
            const settled = await stub.settle({
              requestId,
              costMicros: 3_000,
              priceMicros: 3_300,
              tokens: {
                promptTokens: 500,
                completionTokens: 200,
                cachedPromptTokens: 0,
                reasoningTokens: 0,
              },
              model: "model/0",
              generationIds: [`gen-${requestId}`],
              billable: true,
            });
            if (!hold.ok || !settled.ok) failures++;
          }
        }),
      );
      const ms = Date.now() - start;
      const reconcile = await stub.reconcile();
      return Response.json({ failures, ms, reconciled: reconcile.ok });
    }
    if (url.pathname === "/leases") {
      // `sessions` loops, each a session holding a lease: it reports `batch` settled calls at a
      // time with a renewal, as an agent does, until `n` calls in all are settled.
      const n = Number(url.searchParams.get("n") ?? 1000);
      const sessions = Number(url.searchParams.get("sessions") ?? 1);
      const batch = Number(url.searchParams.get("batch") ?? 16);
      const run = url.searchParams.get("run") ?? "l";
      let failures = 0;
      let calls = 0;
      const start = Date.now();
      await Promise.all(
        Array.from({ length: sessions }, async (_, loop) => {
          const sessionId = `ses_${run}_${loop}`;
          const leaseId = `lease:${sessionId}:0`;
          const report = (usages: LeaseUsage[], want: number) => {
            calls++;
            return stub.lease({
              leaseId,
              memberId: "usr_bench",
              projectId: "prj_bench",
              sessionId,
              usages,
              keepMicros: 0,
              wantMicros: want,
              minMicros: 5_000,
              ttlMs: 20 * 60_000,
            });
          };
          if (!(await report([], 5_000 + batch * 3_300)).ok) failures++;
          const mine = Math.floor(n / sessions);
          for (let done = 0; done < mine; done += batch) {
            const usages = Array.from({ length: Math.min(batch, mine - done) }, (_, j) => ({
              requestId: `${run}-${loop}-${done + j}`,
              costMicros: 3_000,
              priceMicros: 3_300,
              tokens: {
                promptTokens: 500,
                completionTokens: 200,
                cachedPromptTokens: 0,
                reasoningTokens: 0,
              },
              model: "model/0",
              generationIds: [`gen-${run}-${loop}-${done + j}`],
              billable: true,
              drawMicros: 5_000,
            }));
            const result = await report(usages, 5_000 + batch * 3_300);
            if (!result.ok || result.settled.some((one) => !one.ok)) failures++;
          }
          await report([], 0);
        }),
      );
      const ms = Date.now() - start;
      const reconcile = await stub.reconcile();
      return Response.json({ failures, calls, ms, reconciled: reconcile.ok });
    }
    if (url.pathname === "/ping" || url.pathname === "/write") {
      const n = Number(url.searchParams.get("n") ?? 1000);
      const parallel = Number(url.searchParams.get("parallel") ?? 1);
      await Promise.all(
        Array.from({ length: parallel }, async (_, loop) => {
          for (let i = loop; i < n; i += parallel) {
            if (url.pathname === "/ping") await stub.ping();
            else await stub.write(i);
          }
        }),
      );
      return Response.json({ ok: true });
    }
    if (url.pathname === "/seed") {
      const sessions = url.searchParams.get("sessions") === "everyday" ? "everyday" : "tasks";
      return Response.json({
        seeded: await stub.seed(Number(url.searchParams.get("n") ?? 100_000), sessions),
      });
    }
    if (url.pathname === "/usage") {
      const groupBy = (url.searchParams.get("groupBy") ?? "day") as "day";
      const now = Date.now();
      const groups = usageGroups(
        await stub.usage({ from: now - 31 * 24 * 3600_000, to: now + 1, groupBy }),
      );
      return Response.json({
        groups: groups.length,
        requests: groups.reduce((s, g) => s + g.requests, 0),
      });
    }
    return new Response("not found", { status: 404 });
  },
};
