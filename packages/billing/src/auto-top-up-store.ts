/**
 * The tables of automatic top-up (auto-top-up.ts: what it is) and the decisions over them: the
 * settings row with its card, pause and arming, and one row per charge.
 *
 * Only the SQL and the decisions live here (no I/O): the object asks `due()` and `begin()` in one
 * synchronous transaction (so two turns racing past the threshold record one charge), calls
 * Stripe outside it with the charge's key as the idempotency key, and records what Stripe said.
 */
import {
  type AutoTopUpCharge,
  type AutoTopUpChargeStatus,
  type AutoTopUpPause,
  type AutoTopUpSettings,
  type AutoTopUpState,
  attemptAt,
  autoTopUpKey,
  checkAutoTopUpSettings,
  type SavedCard,
} from "./auto-top-up.ts";
import { type SqlExecutor, type SqlValue, sqlRows, sqlRun } from "./sql.ts";

const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS auto_top_up (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    enabled INTEGER NOT NULL DEFAULT 0,
    threshold_micros INTEGER NOT NULL DEFAULT 0,
    amount_micros INTEGER NOT NULL DEFAULT 0,
    monthly_cap_micros INTEGER NOT NULL DEFAULT 0,
    customer_id TEXT,
    payment_method_id TEXT,
    card_brand TEXT,
    card_last4 TEXT,
    card_exp_month INTEGER,
    card_exp_year INTEGER,
    card_saved_at INTEGER,
    paused_code TEXT,
    paused_charge_key TEXT,
    paused_at INTEGER,
    armed INTEGER NOT NULL DEFAULT 1,
    crossings INTEGER NOT NULL DEFAULT 0,
    disarmed_at_seq INTEGER
  )`,
  `CREATE TABLE IF NOT EXISTS auto_top_up_charges (
    key TEXT PRIMARY KEY,
    amount_micros INTEGER NOT NULL,
    status TEXT NOT NULL,
    payment_intent_id TEXT,
    failure_code TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS auto_top_up_charges_by_time ON auto_top_up_charges (created_at)",
  "CREATE UNIQUE INDEX IF NOT EXISTS auto_top_up_charges_by_intent ON auto_top_up_charges (payment_intent_id) WHERE payment_intent_id IS NOT NULL",
];

function monthStart(now: number): number {
  const date = new Date(now);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

export class AutoTopUpStore {
  readonly #exec: SqlExecutor["exec"];

  constructor({ exec }: Pick<SqlExecutor, "exec">) {
    this.#exec = exec;
  }

  #rows(query: string, ...bindings: SqlValue[]): Record<string, unknown>[] {
    return sqlRows(this.#exec, query, ...bindings);
  }

  #run(query: string, ...bindings: SqlValue[]): void {
    sqlRun(this.#exec, query, ...bindings);
  }

  migrate(): void {
    for (const statement of SCHEMA) this.#run(statement);
    this.#run("INSERT OR IGNORE INTO auto_top_up (id) VALUES (1)");
  }

  #row(): Record<string, unknown> {
    return this.#rows("SELECT * FROM auto_top_up WHERE id = 1")[0] ?? {};
  }

  settings(row = this.#row()): AutoTopUpSettings {
    return {
      enabled: row.enabled === 1,
      thresholdMicros: Number(row.threshold_micros ?? 0),
      amountMicros: Number(row.amount_micros ?? 0),
      monthlyCapMicros: Number(row.monthly_cap_micros ?? 0),
    };
  }

  card(row = this.#row()): SavedCard | null {
    if (typeof row.payment_method_id !== "string" || typeof row.customer_id !== "string") {
      return null;
    }
    return {
      customerId: row.customer_id,
      paymentMethodId: row.payment_method_id,
      brand: String(row.card_brand ?? "card"),
      last4: String(row.card_last4 ?? ""),
      expMonth: Number(row.card_exp_month ?? 0),
      expYear: Number(row.card_exp_year ?? 0),
      savedAt: Number(row.card_saved_at ?? 0),
    };
  }

  paused(row = this.#row()): AutoTopUpPause | null {
    return typeof row.paused_code === "string"
      ? {
          code: row.paused_code,
          chargeKey: String(row.paused_charge_key ?? ""),
          at: Number(row.paused_at ?? 0),
        }
      : null;
  }

  /**
   * Sets the settings. Saving it on clears a pause: the admin has seen the failure and asks for
   * the charge again. Turning it off and on does not start a new crossing.
   */
  configure(settings: AutoTopUpSettings): void {
    checkAutoTopUpSettings(settings);
    this.#run(
      `UPDATE auto_top_up SET enabled = ?, threshold_micros = ?, amount_micros = ?,
         monthly_cap_micros = ? WHERE id = 1`,
      settings.enabled ? 1 : 0,
      settings.thresholdMicros,
      settings.amountMicros,
      settings.monthlyCapMicros,
    );
    if (settings.enabled) this.#clearPause();
  }

  /**
   * A card saved (or saved again): it replaces the last one and lifts a pause. A card saved before
   * the one kept (its webhook redelivered late) changes nothing; false then.
   */
  saveCard(card: SavedCard): boolean {
    const current = this.card();
    if (current !== null && current.savedAt > card.savedAt) return false;
    this.#run(
      `UPDATE auto_top_up SET customer_id = ?, payment_method_id = ?, card_brand = ?, card_last4 = ?,
         card_exp_month = ?, card_exp_year = ?, card_saved_at = ? WHERE id = 1`,
      card.customerId,
      card.paymentMethodId,
      card.brand,
      card.last4,
      card.expMonth,
      card.expYear,
      card.savedAt,
    );
    this.#clearPause();
    return true;
  }

  /** Forgets the card (the org removed it, or erasure): automatic top-up stops with it. */
  removeCard(): void {
    this.#run(
      `UPDATE auto_top_up SET enabled = 0, customer_id = NULL, payment_method_id = NULL,
         card_brand = NULL, card_last4 = NULL, card_exp_month = NULL, card_exp_year = NULL,
         card_saved_at = NULL WHERE id = 1`,
    );
  }

  /** Lifts a pause: a person acted on the failure, so the crossing (no money moved) is owed again. */
  #clearPause(): void {
    this.#run(
      `UPDATE auto_top_up SET paused_code = NULL, paused_charge_key = NULL, paused_at = NULL,
         armed = 1 WHERE id = 1 AND paused_code IS NOT NULL`,
    );
  }

  /** Requested or paid automatically since the start of the UTC month of `now`. */
  monthCharged(now: number): number {
    const row = this.#rows(
      `SELECT COALESCE(SUM(amount_micros), 0) AS total FROM auto_top_up_charges
       WHERE status != 'failed' AND created_at >= ?`,
      monthStart(now),
    )[0];
    return Number(row?.total ?? 0);
  }

  /**
   * The charge to make now, or null. A crossing is the available balance falling below the
   * threshold from at or above it: seen by an earlier check, or by the latest credit, which left
   * the posted balance (`fundedBalanceMicros`) at or above it. A charge that leaves the balance
   * still below starts no new crossing. Also: on, a card saved, not paused, no charge in flight,
   * and the month's cap leaves room for the whole amount. Writes only when it sees the balance at
   * or above the threshold again (arming the next crossing).
   */
  due(input: {
    availableMicros: number;
    fundingSeq: number;
    fundedBalanceMicros: number;
    now: number;
  }): { key: string; amountMicros: number; fundingSeq: number } | null {
    // One read of the row per spend: settings, card and pause are its columns.
    const row = this.#row();
    const settings = this.settings(row);
    if (!settings.enabled || this.card(row) === null || this.paused(row) !== null) return null;
    if (input.availableMicros >= settings.thresholdMicros) {
      if (row.armed !== 1) this.#run("UPDATE auto_top_up SET armed = 1 WHERE id = 1");
      return null;
    }
    const armed =
      row.armed === 1 ||
      (input.fundingSeq !== Number(row.disarmed_at_seq ?? -1) &&
        input.fundedBalanceMicros >= settings.thresholdMicros);
    if (!armed) return null;
    if (this.#rows("SELECT 1 FROM auto_top_up_charges WHERE status = 'requested'").length > 0) {
      return null;
    }
    if (this.monthCharged(input.now) + settings.amountMicros > settings.monthlyCapMicros) {
      return null;
    }
    return {
      key: autoTopUpKey(Number(row.crossings ?? 0) + 1),
      amountMicros: settings.amountMicros,
      fundingSeq: input.fundingSeq,
    };
  }

  /** Records a charge as requested; false if one with this key exists (never two per crossing). */
  begin(charge: { key: string; amountMicros: number; fundingSeq?: number }, now: number): boolean {
    const before = this.charge(charge.key);
    if (before !== null) return false;
    // The crossing is spent: the next needs the balance at or above the threshold again.
    this.#run(
      "UPDATE auto_top_up SET crossings = crossings + 1, armed = 0, disarmed_at_seq = ? WHERE id = 1",
      charge.fundingSeq ?? null,
    );
    this.#run(
      `INSERT INTO auto_top_up_charges (key, amount_micros, status, created_at, updated_at)
       VALUES (?, ?, 'requested', ?, ?)`,
      charge.key,
      charge.amountMicros,
      now,
      now,
    );
    return true;
  }

  /**
   * Whether a PaymentIntent a webhook names is this account's charge `key`: `ours` when the
   * charge recorded that intent; `pending` when the charge is still waiting for Stripe's answer
   * to its request (the webhook can arrive before it: try again later); `not_ours` otherwise. A
   * PaymentIntent's metadata is written by whoever creates it, so the key it names proves
   * nothing until the charge recorded the intent (issue 28.1).
   */
  intentOwnership(key: string, paymentIntentId: string): "ours" | "pending" | "not_ours" {
    const charge = this.charge(key);
    if (charge === null) return "not_ours";
    if (charge.paymentIntentId === paymentIntentId) return "ours";
    return charge.paymentIntentId === null && charge.status === "requested"
      ? "pending"
      : "not_ours";
  }

  /** Charges still waiting for Stripe's answer or its webhook, oldest first. */
  inFlight(): AutoTopUpCharge[] {
    return this.#rows(
      "SELECT * FROM auto_top_up_charges WHERE status = 'requested' ORDER BY created_at",
    ).map(toCharge);
  }

  charge(key: string): AutoTopUpCharge | null {
    const row = this.#rows("SELECT * FROM auto_top_up_charges WHERE key = ?", key)[0];
    return row ? toCharge(row) : null;
  }

  /**
   * When to ask Stripe (again) for the charges not yet answered: at once the first time, then
   * after a backoff (Stripe unreachable, or answering 5xx). Null when none waits.
   */
  nextAttemptAt(): number | null {
    const waiting = this.#unanswered().map(attemptAt);
    return waiting.length === 0 ? null : Math.min(...waiting);
  }

  /** The in-flight charges whose request to Stripe is due now. */
  dueAttempts(now: number): AutoTopUpCharge[] {
    return this.#unanswered().filter((charge) => attemptAt(charge) <= now);
  }

  #unanswered(): AutoTopUpCharge[] {
    return this.inFlight().filter((charge) => charge.paymentIntentId === null);
  }

  /** A request to Stripe for the charge is about to be made. */
  noteAttempt(key: string, now: number): void {
    this.#run(
      "UPDATE auto_top_up_charges SET attempts = attempts + 1, updated_at = ? WHERE key = ?",
      now,
      key,
    );
  }

  /** Stripe created the PaymentIntent: its id, to match the webhook with. */
  noteIntent(key: string, paymentIntentId: string, now: number): void {
    this.#run(
      "UPDATE auto_top_up_charges SET payment_intent_id = ?, updated_at = ? WHERE key = ?",
      paymentIntentId,
      now,
      key,
    );
  }

  /** The card was removed before the charge was asked for: dropped, with no pause and no alert. */
  cancel(key: string, now: number): void {
    this.#run(
      `UPDATE auto_top_up_charges SET status = 'failed', failure_code = 'card_removed',
         updated_at = ? WHERE key = ? AND status = 'requested' AND payment_intent_id IS NULL`,
      now,
      key,
    );
  }

  /** The verified webhook said it was paid. Idempotent; true the first time. */
  succeeded(key: string, paymentIntentId: string, now: number): boolean {
    const charge = this.charge(key);
    if (charge === null || charge.status === "succeeded") return false;
    this.#run(
      `UPDATE auto_top_up_charges SET status = 'succeeded', payment_intent_id = ?, failure_code = NULL,
         updated_at = ? WHERE key = ?`,
      paymentIntentId,
      now,
      key,
    );
    return true;
  }

  /**
   * The charge failed (declined, or the bank wants the cardholder): recorded once, and automatic
   * top-up pauses. True the first time (the caller raises the alert then). A paid charge stays paid.
   */
  failed(key: string, code: string, paymentIntentId: string | null, now: number): boolean {
    const charge = this.charge(key);
    if (charge === null || charge.status !== "requested") return false;
    this.#run(
      `UPDATE auto_top_up_charges SET status = 'failed', failure_code = ?,
         payment_intent_id = COALESCE(?, payment_intent_id), updated_at = ? WHERE key = ?`,
      code,
      paymentIntentId,
      now,
      key,
    );
    this.#run(
      "UPDATE auto_top_up SET paused_code = ?, paused_charge_key = ?, paused_at = ? WHERE id = 1",
      code,
      key,
      now,
    );
    return true;
  }

  state(now: number): AutoTopUpState {
    return {
      settings: this.settings(),
      card: this.card(),
      paused: this.paused(),
      monthChargedMicros: this.monthCharged(now),
      charges: this.#rows(
        "SELECT * FROM auto_top_up_charges ORDER BY created_at DESC, key DESC LIMIT 10",
      ).map(toCharge),
    };
  }
}

function toCharge(row: Record<string, unknown>): AutoTopUpCharge {
  return {
    key: String(row.key),
    amountMicros: Number(row.amount_micros),
    status: row.status as AutoTopUpChargeStatus,
    paymentIntentId: (row.payment_intent_id as string | null) ?? null,
    failureCode: (row.failure_code as string | null) ?? null,
    attempts: Number(row.attempts ?? 0),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}
