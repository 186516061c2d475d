import type { SettleInput, SettleResult } from "@parley/billing";
import { billingAccount } from "../billing/account.ts";
import type { SessionLease } from "./session-lease.ts";

/** Usage to record on an org's BillingAccount (the settle RPC's input, minus the time). */
export type UsagePayload = Omit<SettleInput, "now">;

/** A call's row in `parley_steps`, as the paths that settle or close it read it. */
export type StepRow = Record<string, SqlStorageValue>;

/** What the outbox needs from the agent it runs in (`MeteringHost`, turn-metering.ts). */
interface OutboxHost {
  readonly sql: SqlStorage;
  readonly env: Cloudflare.Env;
  erased(): boolean;
  connected(): boolean;
  retryLater(seconds: number): Promise<unknown>;
}

/**
 * Usage priced and not yet on the org's account: `parley_pending_usage`, an outbox. A settled call's
 * usage is written here first and deleted once the account has it: a reset in between, or an account
 * that cannot be reached, leaves it for a retry (on start, or by a schedule); what the account
 * refuses for good is parked with its reason, never dropped. A call drawn on the session's lease
 * waits here for the lease's next report (session-lease.ts).
 */
export class PendingUsage {
  readonly #host: OutboxHost;
  readonly #lease: SessionLease;
  readonly #track: <T>(work: Promise<T>) => Promise<T>;

  constructor(host: OutboxHost, lease: SessionLease, track: <T>(work: Promise<T>) => Promise<T>) {
    this.#host = host;
    this.#lease = lease;
    this.#track = track;
  }

  /**
   * Records a claimed call's usage on the org's BillingAccount, exactly once per request id (the
   * ledger keys usage on it). Written to `parley_pending_usage` first and deleted once the account
   * has it: a reset in between, or an account that cannot be reached, leaves it there for a retry
   * (on start, or by a schedule). A call drawn on the lease waits there for the lease's next
   * report. The transcript is never held back by metering. Resolves to the settle result when it
   * landed, null when it is left for the retry or the report.
   */
  record(step: StepRow, priced: UsagePayload): Promise<SettleResult | null> {
    // Dated now, when the call was priced: it may reach the account later (a lease's report, a
    // retry), and a read in between must find it inside its window.
    const payload: UsagePayload = { ...priced, at: priced.at ?? Date.now() };
    const orgId = step.org_id as string;
    if (typeof step.lease_id === "string") {
      // Drawn on the lease: the usage waits locally and goes with the next report.
      const drawMicros = step.draw_micros as number;
      this.#host.sql.exec(
        "INSERT INTO parley_pending_usage (request_id, org_id, payload, lease_id) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        payload.requestId,
        orgId,
        JSON.stringify({ ...payload, drawMicros }),
        step.lease_id,
      );
      this.#lease.settle(step.lease_id, drawMicros, payload.billable ? payload.priceMicros : 0);
      return Promise.resolve(null);
    }
    this.#host.sql.exec(
      "INSERT INTO parley_pending_usage (request_id, org_id, payload) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
      payload.requestId,
      orgId,
      JSON.stringify(payload),
    );
    return this.#track(
      (async () => {
        try {
          const result = await billingAccount(this.#host.env, orgId).settle(payload);
          if (!this.#host.erased()) this.#settled(payload.requestId, result);
          return result;
        } catch {
          if (!this.#host.erased()) await this.#host.retryLater(10);
          return null;
        }
      })(),
    );
  }

  /** Whether usage is waiting to be sent (not counting what the account refused; any lease). */
  hasPending(): boolean {
    return (
      this.#host.sql
        .exec("SELECT 1 FROM parley_pending_usage WHERE parked_reason IS NULL LIMIT 1")
        .toArray().length > 0
    );
  }

  /**
   * Sends usage that could not be recorded earlier, and what waits under a lease (returning the
   * lease when no client is connected: an idle session holds no credits). Replays are harmless
   * (keyed by request).
   */
  async retry(): Promise<void> {
    if (this.#host.connected()) await this.#lease.flush();
    else await this.#lease.returnLease();
    const rows = this.#host.sql
      .exec(
        "SELECT request_id, org_id, payload FROM parley_pending_usage WHERE parked_reason IS NULL AND lease_id IS NULL",
      )
      .toArray();
    let failed = false;
    for (const row of rows) {
      try {
        const result = await billingAccount(this.#host.env, row.org_id as string).settle(
          JSON.parse(row.payload as string),
        );
        this.#settled(row.request_id as string, result);
      } catch {
        failed = true;
      }
    }
    if (failed) await this.#host.retryLater(60);
  }

  /** Replaces `find` with `replace` in usage still waiting (an erased member's pseudonym). */
  rewrite(find: string, replace: string): void {
    this.#lease.rewriteMember(find, replace);
    this.#host.sql.exec(
      "UPDATE parley_pending_usage SET payload = replace(payload, ?1, ?2) WHERE instr(payload, ?1) > 0",
      find,
      replace,
    );
  }

  /**
   * What the account answered for a settle: landed (or a replay of it) deletes the local copy; a
   * refusal can never land by retrying, so the row is parked with the reason, kept for a human and
   * logged (ids and reason only), never silently dropped and never retried in a loop.
   */
  #settled(requestId: string, result: SettleResult): void {
    if (result.ok) {
      this.#host.sql.exec("DELETE FROM parley_pending_usage WHERE request_id = ?", requestId);
      return;
    }
    this.park(requestId, result.reason);
  }

  /** Parks usage the account refused for good: kept with the reason, logged, never retried. */
  park(requestId: string, reason: string): void {
    this.#host.sql.exec(
      "UPDATE parley_pending_usage SET parked_reason = ? WHERE request_id = ?",
      reason,
      requestId,
    );
    console.error(
      JSON.stringify({
        level: "error",
        source: "metering",
        outcome: "usage_parked",
        reason,
        requestId,
      }),
    );
  }
}
