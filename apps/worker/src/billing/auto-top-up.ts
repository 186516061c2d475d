import {
  type AlertRow,
  type AutoTopUpCharge,
  type AutoTopUpSettings,
  type AutoTopUpState,
  AutoTopUpStore,
  autoTopUpFailurePeriod,
  type CreditLedger,
  MICROS_PER_CENT,
  type SavedCard,
  type SqlExecutor,
  STRIPE_AUTO_TOP_UP_METADATA_KEY,
  STRIPE_ORG_METADATA_KEY,
  type StripeAutoTopUpFailedAction,
} from "@parley/billing";
import Stripe from "stripe";
import { config } from "../env.ts";
import { stripeClient } from "./stripe.ts";

/** What asking Stripe for one charge came to. */
type Attempt =
  | { outcome: "requested"; paymentIntentId: string }
  | { outcome: "failed"; code: string; paymentIntentId: string | null }
  | { outcome: "retry" };

export type ConfigureResult =
  | { ok: true; state: AutoTopUpState }
  | { ok: false; reason: "no_card" };

/**
 * A BillingAccount's automatic top-up (docs/2026-12-02-billing-features.md, "Automatic top-up"):
 * the decision after each spend, made in the same synchronous step as the spend so 50 turns racing
 * past the threshold record one charge; the alarm's request to Stripe, off-session, with the
 * crossing's idempotency key; and what the webhook says. Credits come only from the verified
 * `payment_intent.succeeded` (routes/webhooks.ts); a failure pauses it and raises an alert.
 */
export class AccountAutoTopUp {
  readonly #env: Env;
  readonly #store: AutoTopUpStore;
  readonly #ledger: () => CreditLedger;
  readonly #orgId: () => string | undefined;
  readonly #transact: <T>(fn: () => T) => T;
  /** Makes sure the account's alarm runs by then (it asks Stripe). */
  readonly #wake: (at: number) => Promise<void>;
  /** Queues alerts for the alert webhook; true when the alarm must deliver them. */
  readonly #queue: (alerts: readonly AlertRow[], now: number) => boolean;
  /** On, with a card and not paused: only then can a spend start a charge (saves reads per turn). */
  #armed: boolean;

  constructor(options: {
    env: Env;
    exec: Pick<SqlExecutor, "exec">;
    ledger: () => CreditLedger;
    orgId: () => string | undefined;
    transact: <T>(fn: () => T) => T;
    wake: (at: number) => Promise<void>;
    queue: (alerts: readonly AlertRow[], now: number) => boolean;
  }) {
    this.#env = options.env;
    this.#store = new AutoTopUpStore(options.exec);
    this.#store.migrate();
    this.#ledger = options.ledger;
    this.#orgId = options.orgId;
    this.#transact = options.transact;
    this.#wake = options.wake;
    this.#queue = options.queue;
    this.#armed = this.#isArmed();
  }

  #isArmed(): boolean {
    return (
      this.#store.settings().enabled && this.#store.card() !== null && this.#store.paused() === null
    );
  }

  #changed<T>(fn: () => T): T {
    const result = this.#transact(fn);
    this.#armed = this.#isArmed();
    return result;
  }

  state(now: number): AutoTopUpState {
    return this.#store.state(now);
  }

  configure(settings: AutoTopUpSettings): void {
    this.#changed(() => this.#store.configure(settings));
  }

  saveCard(card: SavedCard): void {
    this.#changed(() => this.#store.saveCard(card));
  }

  removeCard(): void {
    this.#changed(() => this.#store.removeCard());
  }

  /**
   * Sets it. Turning it on needs a saved card; the balance may already be below the new
   * threshold, so it is checked at once.
   */
  async configureNow(settings: AutoTopUpSettings, now: number): Promise<ConfigureResult> {
    if (settings.enabled && this.#store.card() === null) return { ok: false, reason: "no_card" };
    this.configure(settings);
    await this.afterChange(now);
    return { ok: true, state: this.state(now) };
  }

  async saveCardNow(card: SavedCard, now: number): Promise<void> {
    this.saveCard(card);
    await this.afterChange(now);
  }

  removeCardNow(now: number): AutoTopUpState {
    this.removeCard();
    return this.state(now);
  }

  /**
   * The webhook said a charge failed: only a charge of ours that recorded this PaymentIntent
   * pauses (a forged failure must not stop an org's automatic top-up).
   */
  async failedNow(
    action: StripeAutoTopUpFailedAction,
    now: number,
  ): Promise<"applied" | "pending" | "unrecognized"> {
    const owned = this.owns(action.chargeKey, action.paymentIntentId);
    if (owned !== "ours") return owned === "pending" ? "pending" : "unrecognized";
    const alerts = this.failed(action.chargeKey, action.code, action.paymentIntentId, now);
    if (this.#queue(alerts, now)) await this.#wake(now);
    return "applied";
  }

  /** After a spend or a change: a charge due is recorded, and the alarm woken to ask for it. */
  async afterChange(now: number): Promise<void> {
    if (this.check(now)) await this.#wake(now);
  }

  /**
   * After a spend: records the charge for this crossing if one is due. True when it did, and the
   * alarm must ask Stripe for it. Synchronous: no other call runs between the check and the write.
   */
  check(now: number): boolean {
    if (!this.#armed) return false;
    return this.#transact(() => {
      const ledger = this.#ledger();
      const due = this.#store.due({
        availableMicros: ledger.balance().availableMicros,
        fundingSeq: ledger.fundingSeq(),
        fundedBalanceMicros: ledger.fundedBalance(),
        now,
      });
      return due !== null && this.#store.begin(due, now);
    });
  }

  /** When the alarm must next ask Stripe, or null. */
  nextAt(): number | null {
    return this.#store.nextAttemptAt();
  }

  /** The alarm's part: asks Stripe for each due charge. Returns the alerts of charges that failed. */
  async run(now: number): Promise<AlertRow[]> {
    const alerts: AlertRow[] = [];
    for (const charge of this.#store.dueAttempts(now)) {
      const card = this.#store.card();
      const orgId = this.#orgId();
      if (card === null || orgId === undefined) {
        // Removed by the org before the charge was asked for: nothing to alert about.
        this.#store.cancel(charge.key, now);
        continue;
      }
      this.#store.noteAttempt(charge.key, now);
      const attempt = await this.#request(orgId, card, charge);
      if (attempt.outcome === "requested") {
        this.#store.noteIntent(charge.key, attempt.paymentIntentId, Date.now());
      } else if (attempt.outcome === "failed") {
        alerts.push(...this.#fail(charge, attempt.code, attempt.paymentIntentId, Date.now()));
      }
    }
    return alerts;
  }

  /** Whether a webhook's PaymentIntent is charge `chargeKey`'s (AutoTopUpStore.intentOwnership). */
  owns(chargeKey: string, paymentIntentId: string): "ours" | "pending" | "not_ours" {
    return this.#store.intentOwnership(chargeKey, paymentIntentId);
  }

  /** The webhook said the charge was paid (the ledger credit is posted beside this). */
  succeeded(chargeKey: string, paymentIntentId: string, now: number): void {
    this.#transact(() => this.#store.succeeded(chargeKey, paymentIntentId, now));
  }

  /** The webhook said the charge failed: paused, alerted once. */
  failed(chargeKey: string, code: string, paymentIntentId: string, now: number): AlertRow[] {
    const charge = this.#store.charge(chargeKey);
    return charge === null ? [] : this.#fail(charge, code, paymentIntentId, now);
  }

  #fail(
    charge: AutoTopUpCharge,
    code: string,
    paymentIntentId: string | null,
    now: number,
  ): AlertRow[] {
    return this.#changed(() => {
      if (!this.#store.failed(charge.key, code, paymentIntentId, now)) return [];
      const alert = this.#ledger().raiseAlert(
        {
          kind: "auto_top_up_failed",
          period: autoTopUpFailurePeriod(charge.key, code),
          memberId: null,
          thresholdPct: null,
          limitMicros: charge.amountMicros,
          levelMicros: this.#ledger().balance().availableMicros,
        },
        now,
      );
      return alert === null ? [] : [alert];
    });
  }

  /**
   * One off-session PaymentIntent for the charge, under the crossing's idempotency key: a retry
   * after a lost answer replays Stripe's first answer instead of charging again.
   */
  async #request(orgId: string, card: SavedCard, charge: AutoTopUpCharge): Promise<Attempt> {
    try {
      const intent = await stripeClient(config(this.#env)).paymentIntents.create(
        {
          // Whole cents: the settings are checked so (checkAutoTopUpSettings).
          amount: Math.ceil(charge.amountMicros / MICROS_PER_CENT),
          currency: "usd",
          customer: card.customerId,
          payment_method: card.paymentMethodId,
          off_session: true,
          confirm: true,
          description: "Parley credits (automatic top-up)",
          metadata: {
            [STRIPE_ORG_METADATA_KEY]: orgId,
            [STRIPE_AUTO_TOP_UP_METADATA_KEY]: charge.key,
          },
        },
        { idempotencyKey: `${charge.key}-${orgId}` },
      );
      // Off-session, a payment that needs the cardholder cannot get them: it failed.
      if (intent.status === "requires_action" || intent.status === "requires_payment_method") {
        return { outcome: "failed", code: "authentication_required", paymentIntentId: intent.id };
      }
      return { outcome: "requested", paymentIntentId: intent.id };
    } catch (error) {
      if (error instanceof Stripe.errors.StripeCardError) {
        const intent = error.payment_intent as { id?: string } | undefined;
        return {
          outcome: "failed",
          code: error.code ?? "card_declined",
          paymentIntentId: intent?.id ?? null,
        };
      }
      // Refused as asked (a detached card, a customer gone, a key reused with other terms):
      // asking again cannot succeed.
      if (
        error instanceof Stripe.errors.StripeInvalidRequestError ||
        error instanceof Stripe.errors.StripeIdempotencyError
      ) {
        return { outcome: "failed", code: error.code ?? "invalid_request", paymentIntentId: null };
      }
      // Stripe unreachable, or 5xx, or rate limited: the same key is asked again after a backoff.
      console.log(
        JSON.stringify({
          level: "warn",
          source: "auto-top-up",
          charge: charge.key,
          error: error instanceof Error ? error.name : "unknown",
        }),
      );
      return { outcome: "retry" };
    }
  }
}
