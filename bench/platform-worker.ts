// Bench-only Worker: the whole platform, with a BillingAccount that counts the calls agents make
// to it (lease, reserve, settle, release) and answers the count at /api/__bench/billing-calls. Not
// deployed; bench/leases.mjs runs it under wrangler dev with a copy of wrangler.jsonc.
import { BillingAccount as PlatformBillingAccount } from "../apps/worker/src/billing/billing-account.ts";
import worker from "../apps/worker/src/index.ts";

export { AssistantAgent, ErasureJob, OnboardingAgent } from "../apps/worker/src/index.ts";

type Call = "lease" | "reserve" | "settle" | "release";

export class BillingAccount extends PlatformBillingAccount {
  #calls: Record<Call, number> = { lease: 0, reserve: 0, settle: 0, release: 0 };

  override lease(...args: Parameters<PlatformBillingAccount["lease"]>) {
    this.#calls.lease++;
    return super.lease(...args);
  }

  override reserve(...args: Parameters<PlatformBillingAccount["reserve"]>) {
    this.#calls.reserve++;
    return super.reserve(...args);
  }

  override settle(...args: Parameters<PlatformBillingAccount["settle"]>) {
    this.#calls.settle++;
    return super.settle(...args);
  }

  override release(...args: Parameters<PlatformBillingAccount["release"]>) {
    this.#calls.release++;
    return super.release(...args);
  }

  benchCalls(): Record<Call, number> {
    return { ...this.#calls };
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
