import { AIChatAgent } from "@cloudflare/ai-chat";
import type { StepPrices } from "@parley/billing";
import { loadCatalogue, stepPricesFor } from "../assistants/catalogue.ts";
import { agentSettings } from "../env.ts";
import { ToolCallMeter } from "../tools/tool-meter.ts";
import { KeptRows } from "./kept-rows.ts";
import { ensureLocalSchema } from "./local-schema.ts";
import { TurnMetering } from "./turn-metering.ts";

/**
 * A chat agent's money, under `ParleyChatAgent` (chat-agent.ts): its metering (holds, usage waiting
 * to land, the session's lease), its tool source calls, what a reset left open, and the schedules
 * and BillingAccount calls that reach them by name. Its local tables are made here, first.
 */
export abstract class MeteredChatAgent extends AIChatAgent<Cloudflare.Env> {
  /** This chat's money: holds, usage waiting to land, what a reset left open (turn-metering.ts). */
  protected readonly meter: TurnMetering;
  /**
   * This chat's tool source calls: their holds and settlements, and who answered each approval
   * (tools/tool-meter.ts). `sourceTools` takes it as its `meter`.
   */
  protected readonly toolCalls: ToolCallMeter;
  protected erased = false;
  /** What the agent keeps of D1 between turns, across hibernation (kept-rows.ts). */
  protected readonly kept: KeptRows;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ensureLocalSchema(ctx.storage.sql);
    this.kept = new KeptRows(ctx.storage.sql);
    this.meter = new TurnMetering({
      sql: ctx.storage.sql,
      env,
      erased: () => this.erased,
      transact: (fn) => ctx.storage.transactionSync(fn),
      connected: () => ctx.getWebSockets().length > 0,
      retryLater: (seconds) =>
        this.schedule(seconds, "retryPendingUsage", undefined, { idempotent: true }),
      wakeAt: (at, key) => this.schedule(at, "returnIdleLease", key, { idempotent: true }),
    });
    this.toolCalls = new ToolCallMeter({
      sql: ctx.storage.sql,
      env,
      retryLater: (seconds) =>
        this.schedule(seconds, "retryPendingUsage", undefined, { idempotent: true }),
    });
  }

  /** A counter of this object's (`parley_counters`: the onboarding preview's turns used). */
  protected counter(key: string): number {
    return (this.ctx.storage.sql
      .exec("SELECT value FROM parley_counters WHERE key = ?", key)
      .toArray()[0]?.value ?? 0) as number;
  }

  /** Sets a counter of this object's. */
  protected setCounter(key: string, value: number): void {
    this.ctx.storage.sql.exec(
      "INSERT INTO parley_counters (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      key,
      value,
    );
  }

  /**
   * What a reset cut off, first thing: usage kept from landing is sent (a rare case: one RPC per
   * row), and calls left open are closed, priced by the provider's generation record (or the
   * estimate), or released if they never went out.
   */
  override async onStart(): Promise<void> {
    if (this.meter.hasPending()) await this.meter.retryPending();
    // Tool calls a reset cut off: charged once if they went out, their holds back if not.
    await this.toolCalls.closeOpen().catch(() => undefined);
    if (!this.meter.hasOpen()) return;
    // Each open call at its own model's catalogue prices (an operator's model too, which the
    // configured table does not list); a model gone from the catalogue at the default's.
    const fallback = agentSettings(this.env).prices;
    const catalogue = await loadCatalogue(this.env).catch(() => null);
    const pricesFor = (model: string | null): StepPrices => {
      const entry = model === null ? undefined : catalogue?.models.get(model);
      if (entry) return stepPricesFor(entry, fallback.markupBps);
      return model === null ? fallback : { ...fallback, model };
    };
    await this.meter.closeOpen(pricesFor).catch(() => undefined);
  }

  /** Scheduled (by name, `TurnMetering`'s `retryLater`): sends usage that could not land earlier. */
  async retryPendingUsage(): Promise<void> {
    await Promise.all([this.meter.retryPending(), this.toolCalls.settleClosed()]);
  }

  /** Scheduled (by name, the lease's idle check): returns the lease once the session idles. */
  async returnIdleLease(): Promise<void> {
    if (this.erased) return;
    await this.meter.track(this.meter.lease.idleCheck());
  }

  /**
   * The org's BillingAccount calls this when a spend limit changed: no call draws on the current
   * lease any more; it is reported and returned, and the next call is admitted under the new limit.
   * Not reachable by clients (no route or callable leads here).
   */
  async dropLease(): Promise<void> {
    if (this.erased) return;
    await Promise.all([
      this.meter.track(this.meter.lease.returnLease()),
      this.toolCalls.settleClosed(),
    ]);
  }

  /**
   * The org's BillingAccount calls this before it answers a read of the org's usage or balance:
   * what this session drew and has not reported yet is reported now. Not reachable by clients.
   */
  async reportUsage(): Promise<void> {
    if (this.erased) return;
    await Promise.all([this.meter.track(this.meter.lease.flush()), this.toolCalls.settleClosed()]);
  }
}
