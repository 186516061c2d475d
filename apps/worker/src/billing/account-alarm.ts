import type { AlertOutbox } from "@parley/billing";

/**
 * The soonest an alarm re-arms after it ran: whatever is pending, the next run is in the future, so
 * no state of the outbox or the holds can make the alarm fire in a loop.
 */
const MIN_ALARM_GAP_MS = 1_000;

/**
 * A BillingAccount's one alarm, which serves all its jobs: voiding expired holds, delivering
 * queued alerts, expiring grants, renewing the monthly allowance and asking Stripe for automatic
 * top-ups (`BillingAccount.alarm`).
 */
export class AccountAlarm {
  readonly #storage: DurableObjectStorage;
  readonly #outbox: Pick<AlertOutbox, "nextAttemptAt">;
  /** Other jobs with a time of their own: grants expiring or renewing, automatic top-ups. */
  readonly #jobs: readonly { nextAt(now: number): number | null }[];
  /** The alarm time as last read or set: saves a storage read per reservation. */
  #at: number | null | undefined;

  constructor(
    storage: DurableObjectStorage,
    outbox: Pick<AlertOutbox, "nextAttemptAt">,
    jobs: readonly { nextAt(now: number): number | null }[],
  ) {
    this.#storage = storage;
    this.#outbox = outbox;
    this.#jobs = jobs;
  }

  /** Makes sure the alarm fires by `at` (one storage write only when it must move earlier). */
  async fireBy(at: number): Promise<void> {
    if (this.#at === undefined) this.#at = await this.#storage.getAlarm();
    if (this.#at === null || this.#at > at) {
      this.#at = at;
      await this.#storage.setAlarm(at);
    }
  }

  /** The alarm that is running is gone: none is set until `rearm` or `fireBy` sets the next. */
  fired(): void {
    this.#at = null;
  }

  /**
   * Sets the next alarm after one ran. It is only ever set in the future, for work that can be
   * done: a hold that will expire, or an alert that is due and deliverable (parked and spent rows
   * never count), so an idle account never spins.
   */
  async rearm(now: number): Promise<void> {
    const holds = this.#storage.sql
      .exec("SELECT MIN(expires_at) AS at FROM ledger_holds WHERE status = 'open'")
      .one().at as number | null;
    const outbox = this.#outbox.nextAttemptAt();
    // A grant expiring, the monthly allowance renewing (grants.ts), a top-up to ask Stripe for.
    const jobs = this.#jobs.map((job) => job.nextAt(now));
    const next = [holds, outbox, ...jobs].filter((t): t is number => t !== null);
    if (next.length === 0) return;
    await this.fireBy(Math.max(Math.min(...next), now + MIN_ALARM_GAP_MS));
  }
}
