/**
 * A payment's reversals take at most what it paid (issue 28.2).
 *
 * Stripe reports each reversal of a payment on its own: a charge's refunds as a running total
 * (`amount_refunded`), each dispute's withdrawal and, when won, its reinstatement. Stripe can take
 * more than was paid: a payment refunded in full can still be disputed, and both stand at Stripe.
 * The org's credits must lose at most what the payment gave them, so the ledger does not follow
 * each report; it follows one figure per payment, a function of everything Stripe said so far:
 *
 *   taken = min(paid, refunded + Σ over disputes max(0, withdrawn − reinstated))
 *
 * where `refunded` sums each charge's highest running total, and each dispute's `withdrawn` and
 * `reinstated` are the highest amounts seen for it. Those facts only grow (merged by `max`), so a
 * report replayed or arriving out of order changes nothing or moves them to the same place, and
 * `taken` ends the same whatever the order. A won dispute gives back only what it took: after a
 * full refund a dispute takes nothing (the payment is used up) and its reinstatement gives
 * nothing back. What Stripe took beyond `paid` is the payment's `excess`, for the operator.
 *
 * The ledger stays append-only: each change of `taken` posts one adjustment of the difference
 * under the payment's reference (`stripe:reversals:<payment intent>`), keyed by a version that
 * grows with each change, in the same transaction as the facts. Refunds and disputes posted before
 * this (under `stripe:refunds:<charge>`, `stripe:dispute:<dispute>`,
 * `stripe:dispute-reinstated:<dispute>`) count as already taken, and their facts are read back
 * from them the first time a report names their charge or dispute.
 */

import type { PostResult } from "./credits.ts";
import type { CreditLedger } from "./ledger.ts";
import type { LedgerStore } from "./ledger-store.ts";
import { type SqlExecutor, type SqlValue, sqlRows, sqlRun } from "./sql.ts";

/** One report of Stripe's about a payment of Parley's, with what that payment credited. */
export interface ReversalReport {
  /** The payment (its PaymentIntent id), as Parley recorded it. */
  paymentRef: string;
  /** What the payment credited (Parley's record, never the event's). */
  paidMicros: number;
  kind: "refund" | "dispute" | "dispute_reinstated";
  /** The refunded charge, or the dispute. */
  sourceId: string;
  /** A dispute's charge (so refunds posted before this version are found); null for refunds. */
  chargeId: string | null;
  /**
   * A refund: the charge's running total refunded. A dispute: the amount withdrawn. A
   * reinstatement: the amount given back.
   */
  amountMicros: number;
}

/** What became of one payment, in credits and at Stripe. */
export interface PaymentReversals {
  paymentRef: string;
  paidMicros: number;
  /** Refunded at Stripe (every charge's running total). */
  refundedMicros: number;
  /** Disputed at Stripe and not given back (withdrawn minus reinstated, per dispute). */
  disputedMicros: number;
  /** Taken back from the org's credits: never more than `paidMicros`. */
  reversedMicros: number;
  /** What Stripe reversed beyond what the payment paid: not taken from credits. */
  excessMicros: number;
  /** Grows with each change of the facts or of the ledger (orders copies of this elsewhere). */
  version: number;
}

const SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS payment_reversals (
    payment_ref TEXT PRIMARY KEY,
    paid_micros INTEGER NOT NULL,
    version INTEGER NOT NULL DEFAULT 0
  )`,
  // Stripe's facts, one row per refunded charge or dispute, each only ever raised.
  `CREATE TABLE IF NOT EXISTS payment_reversal_sources (
    payment_ref TEXT NOT NULL,
    source_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('refund', 'dispute')),
    taken_micros INTEGER NOT NULL DEFAULT 0,
    returned_micros INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (payment_ref, source_id)
  )`,
];

/** The ledger reference of a payment's reversals. */
export const reversalReference = (paymentRef: string): string => `stripe:reversals:${paymentRef}`;

interface Source {
  kind: "refund" | "dispute";
  sourceId: string;
  takenMicros: number;
  returnedMicros: number;
}

/**
 * What a payment's reversals take from credits, and what Stripe took beyond it, from the facts.
 * Pure: the rule of the module doc.
 */
export function reversalTotals(
  paidMicros: number,
  sources: readonly Pick<Source, "kind" | "takenMicros" | "returnedMicros">[],
): { refundedMicros: number; disputedMicros: number; takenMicros: number } {
  let refundedMicros = 0;
  let disputedMicros = 0;
  for (const source of sources) {
    if (source.kind === "refund") refundedMicros += source.takenMicros;
    else disputedMicros += Math.max(0, source.takenMicros - source.returnedMicros);
  }
  return {
    refundedMicros,
    disputedMicros,
    takenMicros: Math.min(paidMicros, refundedMicros + disputedMicros),
  };
}

/** The references refunds and disputes were posted under before this module. */
function legacyReferences(source: Pick<Source, "kind" | "sourceId">): string[] {
  return source.kind === "refund"
    ? [`stripe:refunds:${source.sourceId}`]
    : [`stripe:dispute:${source.sourceId}`, `stripe:dispute-reinstated:${source.sourceId}`];
}

const MEMOS: Record<ReversalReport["kind"], string> = {
  refund: "Stripe refund",
  dispute: "Stripe dispute",
  dispute_reinstated: "Stripe dispute reinstated",
};

export class ReversalStore {
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
  }

  #sources(paymentRef: string): Source[] {
    return this.#rows(
      `SELECT kind, source_id, taken_micros, returned_micros FROM payment_reversal_sources
       WHERE payment_ref = ? ORDER BY source_id`,
      paymentRef,
    ).map((row) => ({
      kind: row.kind as Source["kind"],
      sourceId: String(row.source_id),
      takenMicros: Number(row.taken_micros),
      returnedMicros: Number(row.returned_micros),
    }));
  }

  /**
   * A source's row, made the first time it is named: with what was posted for it before this
   * module (a refund's running total, a dispute's withdrawal and reinstatement), so none of it is
   * taken a second time.
   */
  #ensureSource(
    ledger: Pick<LedgerStore, "sumEntriesByReference">,
    paymentRef: string,
    kind: Source["kind"],
    sourceId: string,
  ): void {
    const [taken, returned] =
      kind === "refund"
        ? [-ledger.sumEntriesByReference(`stripe:refunds:${sourceId}`), 0]
        : [
            -ledger.sumEntriesByReference(`stripe:dispute:${sourceId}`),
            ledger.sumEntriesByReference(`stripe:dispute-reinstated:${sourceId}`),
          ];
    this.#run(
      `INSERT OR IGNORE INTO payment_reversal_sources
         (payment_ref, source_id, kind, taken_micros, returned_micros) VALUES (?, ?, ?, ?, ?)`,
      paymentRef,
      sourceId,
      kind,
      Math.max(0, taken),
      Math.max(0, returned),
    );
  }

  /** What the ledger holds for the payment's reversals now (negative: taken). */
  #posted(ledger: Pick<LedgerStore, "sumEntriesByReference">, paymentRef: string): number {
    let posted = ledger.sumEntriesByReference(reversalReference(paymentRef));
    for (const source of this.#sources(paymentRef)) {
      for (const reference of legacyReferences(source)) {
        posted += ledger.sumEntriesByReference(reference);
      }
    }
    return posted;
  }

  /**
   * Records Stripe's report and brings the ledger to what the payment's reversals take: at most
   * one adjustment, of the difference. Idempotent and order-free (module doc). Run it inside the
   * account's transaction with the event's record, as every Stripe effect is.
   */
  apply(
    ledger: CreditLedger,
    entries: Pick<LedgerStore, "sumEntriesByReference" | "transact">,
    report: ReversalReport,
    now: number,
  ): { result: PostResult; reversals: PaymentReversals } {
    if (!Number.isSafeInteger(report.amountMicros) || report.amountMicros < 0) {
      throw new RangeError("amountMicros must be a non-negative integer");
    }
    if (!Number.isSafeInteger(report.paidMicros) || report.paidMicros < 0) {
      throw new RangeError("paidMicros must be a non-negative integer");
    }
    return entries.transact(() => {
      const { paymentRef } = report;
      this.#run(
        "INSERT OR IGNORE INTO payment_reversals (payment_ref, paid_micros) VALUES (?, ?)",
        paymentRef,
        report.paidMicros,
      );
      const kind = report.kind === "refund" ? "refund" : "dispute";
      this.#ensureSource(entries, paymentRef, kind, report.sourceId);
      if (report.chargeId !== null) {
        this.#ensureSource(entries, paymentRef, "refund", report.chargeId);
      }
      const column = report.kind === "dispute_reinstated" ? "returned_micros" : "taken_micros";
      // Only ever raised: a smaller figure is an older report, arriving late.
      const raised = this.#rows(
        `UPDATE payment_reversal_sources SET ${column} = ?
         WHERE payment_ref = ? AND source_id = ? AND ${column} < ? RETURNING 1 AS raised`,
        report.amountMicros,
        paymentRef,
        report.sourceId,
        report.amountMicros,
      ).length;
      const paid = this.#paid(paymentRef);
      const target = reversalTotals(paid, this.#sources(paymentRef)).takenMicros;
      const delta = 0 - target - this.#posted(entries, paymentRef);
      let result: PostResult = { ok: true, entry: null, replayed: false, alerts: [] };
      // The version moves with every change (a fact, or an entry), so whoever copies this state
      // elsewhere (the payments list) can keep the newest whatever order the copies arrive in.
      if (raised > 0 || delta !== 0) {
        this.#run(
          "UPDATE payment_reversals SET version = version + 1 WHERE payment_ref = ?",
          paymentRef,
        );
      }
      if (delta !== 0) {
        const version = this.#version(paymentRef);
        result = ledger.post({
          kind: "adjustment",
          amountMicros: delta,
          idempotencyKey: `${reversalReference(paymentRef)}#${version}`,
          reference: reversalReference(paymentRef),
          // A debit names what Stripe reported; a credit is a reinstatement, or the cap giving
          // back what an uncapped version took too much of.
          memo:
            delta < 0 || report.kind === "dispute_reinstated"
              ? MEMOS[report.kind]
              : "Stripe reversals capped at what the payment paid",
          now,
          fundingRef: paymentRef,
        });
      }
      const reversals = this.get(entries, paymentRef);
      if (reversals === null) throw new Error("the payment's reversals were just written");
      return { result, reversals };
    });
  }

  #paid(paymentRef: string): number {
    return Number(
      this.#rows("SELECT paid_micros FROM payment_reversals WHERE payment_ref = ?", paymentRef)[0]
        ?.paid_micros ?? 0,
    );
  }

  #version(paymentRef: string): number {
    return Number(
      this.#rows("SELECT version FROM payment_reversals WHERE payment_ref = ?", paymentRef)[0]
        ?.version ?? 0,
    );
  }

  /** What became of a payment, or null when Stripe reported no reversal of it. */
  get(
    ledger: Pick<LedgerStore, "sumEntriesByReference">,
    paymentRef: string,
  ): PaymentReversals | null {
    const row = this.#rows(
      "SELECT paid_micros, version FROM payment_reversals WHERE payment_ref = ?",
      paymentRef,
    )[0];
    if (row === undefined) return null;
    const paidMicros = Number(row.paid_micros);
    const { refundedMicros, disputedMicros } = reversalTotals(
      paidMicros,
      this.#sources(paymentRef),
    );
    const reversedMicros = 0 - this.#posted(ledger, paymentRef);
    return {
      paymentRef,
      paidMicros,
      refundedMicros,
      disputedMicros,
      reversedMicros,
      excessMicros: Math.max(0, refundedMicros + disputedMicros - reversedMicros),
      version: Number(row.version),
    };
  }
}
