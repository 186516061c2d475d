// Bench-only Worker: the whole platform, with a BillingAccount that counts the calls agents make
// to it (lease, reserve, settle, release) and answers the count at /api/__bench/billing-calls. Not
// deployed; bench/leases.mjs runs it under wrangler dev with a copy of wrangler.jsonc.
import { BillingAccount as PlatformBillingAccount } from "../apps/worker/src/billing/billing-account.ts";
import worker from "../apps/worker/src/index.ts";

// Every Durable Object class of the Worker, whichever it declares: the class defined below
// takes precedence over the one of the same name (a local export wins over `export *`), and a
// class added to the Worker later is exported here too (MailOutbox was missing: wrangler refused
// to start this bench).
export * from "../apps/worker/src/index.ts";

type Call = "lease" | "reserve" | "settle" | "release";

export class BillingAccount extends PlatformBillingAccount {
  /** Counted in the object's SQLite: a count kept in memory would be lost if the object resets. */
  #count(call: Call): void {
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS bench_calls (call TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    );
    this.ctx.storage.sql.exec(
      "INSERT INTO bench_calls (call, n) VALUES (?, 1) ON CONFLICT (call) DO UPDATE SET n = n + 1",
      call,
    );
  }

  override lease(...args: Parameters<PlatformBillingAccount["lease"]>) {
    this.#count("lease");
    return super.lease(...args);
  }

  override reserve(...args: Parameters<PlatformBillingAccount["reserve"]>) {
    this.#count("reserve");
    return super.reserve(...args);
  }

  override settle(...args: Parameters<PlatformBillingAccount["settle"]>) {
    this.#count("settle");
    return super.settle(...args);
  }

  override release(...args: Parameters<PlatformBillingAccount["release"]>) {
    this.#count("release");
    return super.release(...args);
  }

  benchCalls(): Record<Call, number> {
    const calls: Record<Call, number> = { lease: 0, reserve: 0, settle: 0, release: 0 };
    this.ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS bench_calls (call TEXT PRIMARY KEY, n INTEGER NOT NULL)",
    );
    for (const row of this.ctx.storage.sql.exec("SELECT call, n FROM bench_calls")) {
      calls[row.call as Call] = row.n as number;
    }
    return calls;
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/api/__bench/billing-calls") {
      const org = url.searchParams.get("org") ?? "";
      const stub = env.BILLING.get(env.BILLING.idFromName(org)) as unknown as {
        benchCalls(): Promise<Record<Call, number>>;
      };
      return Response.json(await stub.benchCalls());
    }
    return worker.fetch(request, env, ctx);
  },
};
