import {
  type AccountStore,
  applyStripeAction,
  type CreditLedger,
  type PaymentReversals,
  type ReversalStore,
  reversalReport,
  type SqlLedgerStore,
  type StripeCreditAction,
  type StripeReversalAction,
} from "@parley/billing";
import type { StripeApplyResult } from "./account-requests.ts";
import type { AlertWebhook } from "./alert-webhook.ts";
import type { AccountAutoTopUp } from "./auto-top-up.ts";

type StripeEventRef = { id: string; type: string };

/**
 * What verified Stripe events do to one BillingAccount (routes/webhooks.ts decides which account,
 * from Parley's records): credits, checked against this account's own automatic top-up charges,
 * and refunds and disputes, capped at what their payment paid (packages/billing reversals.ts).
 * Each event's id is recorded in the same transaction as its effect, so a redelivery is a no-op.
 */
export class AccountStripe {
  readonly #account: AccountStore;
  readonly #store: SqlLedgerStore;
  readonly #reversals: ReversalStore;
  readonly #autoTopUp: AccountAutoTopUp;
  readonly #webhook: AlertWebhook;
  readonly #ledger: () => CreditLedger;
  readonly #transact: <T>(fn: () => T) => T;
  /** Makes sure the account's alarm runs by then: it delivers the alerts a credit or debit fired. */
  readonly #wake: (at: number) => Promise<void>;

  constructor(options: {
    account: AccountStore;
    store: SqlLedgerStore;
    reversals: ReversalStore;
    autoTopUp: AccountAutoTopUp;
    webhook: AlertWebhook;
    ledger: () => CreditLedger;
    transact: <T>(fn: () => T) => T;
    wake: (at: number) => Promise<void>;
  }) {
    this.#account = options.account;
    this.#store = options.store;
    this.#reversals = options.reversals;
    this.#autoTopUp = options.autoTopUp;
    this.#webhook = options.webhook;
    this.#ledger = options.ledger;
    this.#transact = options.transact;
    this.#wake = options.wake;
  }

  /**
   * A credit. An automatic top-up is credited only when this account's charge recorded the
   * PaymentIntent (its metadata is anyone's to write): `pending` while the charge still waits for
   * Stripe's answer (the webhook can come first), `unrecognized` when no charge of ours is it.
   */
  async credit(
    event: StripeEventRef,
    action: StripeCreditAction,
    now: number,
  ): Promise<StripeApplyResult> {
    let queued = false;
    const applied = this.#transact((): StripeApplyResult => {
      if (action.type === "auto_topup") {
        const owned = this.#autoTopUp.owns(action.chargeKey, action.paymentIntentId);
        if (owned !== "ours") return { status: owned === "pending" ? "pending" : "unrecognized" };
      }
      if (this.#account.stripeEventSeen(event.id)) return { status: "duplicate" };
      const result = applyStripeAction(this.#ledger(), action, now);
      this.#account.recordStripeEvent(event, now);
      if (result.ok) queued = this.#webhook.queue(result.alerts, now);
      if (action.type === "auto_topup") {
        this.#autoTopUp.succeeded(action.chargeKey, action.paymentIntentId, now);
      }
      return { status: "applied", result };
    });
    // Queued alerts wait for the alarm: without this they waited for the next spend's.
    if (queued) await this.#wake(now);
    return applied;
  }

  /**
   * A refund or dispute of one of this org's payments (`paidMicros`: what it credited, from
   * Parley's record). Answers what became of the payment, also for a redelivered event, so the
   * route can copy it to the payments list after a failure.
   */
  async reversal(
    event: StripeEventRef,
    action: StripeReversalAction & { paymentIntentId: string },
    paidMicros: number,
    now: number,
  ): Promise<{ status: "applied" | "duplicate"; reversals: PaymentReversals }> {
    let queued = false;
    type Outcome = { status: "applied" | "duplicate"; reversals: PaymentReversals };
    const outcome = this.#transact((): Outcome => {
      if (this.#account.stripeEventSeen(event.id)) {
        const reversals = this.#reversals.get(this.#store, action.paymentIntentId);
        if (reversals !== null) return { status: "duplicate", reversals };
      }
      const applied = this.#reversals.apply(
        this.#ledger(),
        this.#store,
        reversalReport(action, paidMicros),
        now,
      );
      if (!this.#account.stripeEventSeen(event.id)) this.#account.recordStripeEvent(event, now);
      // A refund or dispute can take the balance under the low-balance alert's threshold.
      if (applied.result.ok) queued = this.#webhook.queue(applied.result.alerts, now);
      return { status: "applied", reversals: applied.reversals };
    });
    if (queued) await this.#wake(now);
    return outcome;
  }
}
