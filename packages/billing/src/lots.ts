/**
 * Lots: which grant the ledger's credits came from and what is left of each
 * (docs/2026-12-02-billing-features.md, "Credit grants"). The ledger calls these inside its own
 * transactions, for every entry it posts; nothing here posts an entry by itself.
 *
 * The books. `sum(remaining of live lots) − debt = posted`, always. A credit first pays the debt,
 * and only the rest becomes its lot's remainder; a debit (usage, a refund, an expiry) takes from
 * lots in draw order and what no lot covers becomes debt. So a positive debt means every lot is
 * empty, and a balance ≥ 0 is exactly the sum of the lots' remainders.
 */

import type { EntryKind, GrantSource, LedgerStore, LotDrawRow, LotRow } from "./ledger-store.ts";
import { addMicros, assertPositiveMicros } from "./money.ts";

/** How a funding entry's lot is drawn and when it expires. */
export interface GrantTerms {
  source: GrantSource;
  /** Lower draws first among lots expiring at the same time; 50 when absent. */
  priority?: number;
  /** When the alarm takes back what is left; null or absent: never. */
  expiresAt?: number | null;
  /** What refunds and disputes of this funding name (a top-up's payment intent). */
  fundingRef?: string | null;
}

export const DEFAULT_GRANT_PRIORITY = 50;
export const LEGACY_LOT_ID = "grant-legacy";

/** Set to 1 once an account's balance became lots (the opening lot, or its debt). */
const OPENED = "lots:opened";
/** What debits took beyond every lot's remainder; paid back first by the next credit. */
const DEBT = "lots:debt";

/** The idempotency key of a lot's expiry entry: one per lot, so a lot never expires twice. */
export function expiryKey(lotId: string): string {
  return `grant-expiry:${lotId}`;
}

export function lotId(entrySeq: number): string {
  return `grant-${entrySeq}`;
}

/** The lot a credit opens when its poster names no terms. */
export function defaultTerms(kind: EntryKind): GrantTerms {
  if (kind === "topup") return { source: "top_up" };
  if (kind === "grant") return { source: "promotion" };
  return { source: "adjustment" };
}

export function assertGrantTerms(terms: GrantTerms): void {
  const priority = terms.priority ?? DEFAULT_GRANT_PRIORITY;
  if (!Number.isSafeInteger(priority) || priority < 0 || priority > 100) {
    throw new RangeError("priority must be an integer from 0 to 100");
  }
  const expiresAt = terms.expiresAt ?? null;
  if (expiresAt !== null && (!Number.isSafeInteger(expiresAt) || expiresAt < 0)) {
    throw new RangeError("expiresAt must be a non-negative integer timestamp in ms");
  }
}

/**
 * Whether a lot was granted on these terms (a replayed grant must name the same ones). The
 * funding reference is left out: two Stripe events for one payment may differ in whether they
 * name its payment intent, and must still replay, not conflict.
 */
export function sameTerms(lot: LotRow, terms: GrantTerms): boolean {
  return (
    lot.source === terms.source &&
    lot.priority === (terms.priority ?? DEFAULT_GRANT_PRIORITY) &&
    lot.expiresAt === (terms.expiresAt ?? null)
  );
}

/** One lot's share of a debit. */
export interface LotDraw {
  lotId: string;
  micros: number;
}

/** The lots of one ledger, over its store; every method runs inside the ledger's transaction. */
export class Lots {
  readonly #store: LedgerStore;

  constructor(store: LedgerStore) {
    this.#store = store;
  }

  get opened(): boolean {
    return this.#store.getCounter(OPENED) === 1;
  }

  debtMicros(): number {
    return this.#store.getCounter(DEBT);
  }

  /**
   * Before the first entry that touches lots: the balance as it is becomes one opening lot with no
   * expiry (or, when negative, the debt), so an account that had credits before lots existed keeps
   * them. `postedMicros` is the posted balance before the entry.
   */
  open(postedMicros: number, now: number): void {
    if (this.opened) return;
    this.#store.setCounter(OPENED, 1);
    if (postedMicros > 0) {
      this.#store.insertLot({
        id: LEGACY_LOT_ID,
        source: "legacy",
        priority: DEFAULT_GRANT_PRIORITY,
        grantedMicros: postedMicros,
        remainingMicros: postedMicros,
        expiresAt: null,
        createdAt: now,
        entrySeq: 0,
        fundingRef: null,
        expiredAt: null,
        expirySeq: null,
      });
    } else if (postedMicros < 0) {
      this.#store.setCounter(DEBT, -postedMicros);
    }
  }

  /** A credit entry's lot: the debt is paid first, the rest is the lot's remainder. */
  fund(entry: { seq: number; amountMicros: number; createdAt: number }, terms: GrantTerms): LotRow {
    assertPositiveMicros(entry.amountMicros, "amountMicros");
    const debt = this.debtMicros();
    const paid = Math.min(debt, entry.amountMicros);
    if (paid > 0) this.#store.setCounter(DEBT, debt - paid);
    const lot: LotRow = {
      id: lotId(entry.seq),
      source: terms.source,
      priority: terms.priority ?? DEFAULT_GRANT_PRIORITY,
      grantedMicros: entry.amountMicros,
      remainingMicros: entry.amountMicros - paid,
      expiresAt: terms.expiresAt ?? null,
      createdAt: entry.createdAt,
      entrySeq: entry.seq,
      fundingRef: terms.fundingRef ?? null,
      expiredAt: null,
      expirySeq: null,
    };
    this.#store.insertLot(lot);
    return lot;
  }

  /**
   * A debit of entry `entrySeq`: `first` (a refund's own top-up) gives first, then every live lot
   * in draw order; what none covers becomes debt. Each lot's share is recorded against the entry
   * (the usage CSV's `grants` column). Returns the shares (the debt's is left out).
   */
  take(amountMicros: number, entrySeq: number, first: LotRow | null = null): LotDraw[] {
    return this.takeEach([{ entrySeq, amountMicros }], first);
  }

  /**
   * Debits of several entries, in order, over one read of the live lots (a lease report's calls):
   * the same as taking them one by one, with each lot written once.
   */
  takeEach(
    debits: readonly { entrySeq: number; amountMicros: number }[],
    first: LotRow | null = null,
  ): LotDraw[] {
    const wanted = debits.filter((debit) => debit.amountMicros > 0);
    if (wanted.length === 0) return [];
    const live = this.#store.listLiveLots();
    const order = (
      first === null ? live : [first, ...live.filter((lot) => lot.id !== first.id)]
    ).filter((lot) => lot.expiredAt === null && lot.remainingMicros > 0);
    const left = new Map(order.map((lot) => [lot.id, lot.remainingMicros]));
    const draws: LotDraw[] = [];
    const rows: LotDrawRow[] = [];
    let debt = 0;
    for (const debit of wanted) {
      let owed = debit.amountMicros;
      for (const lot of order) {
        if (owed === 0) break;
        const remaining = left.get(lot.id) ?? 0;
        if (remaining === 0) continue;
        const micros = Math.min(owed, remaining);
        left.set(lot.id, remaining - micros);
        draws.push({ lotId: lot.id, micros });
        rows.push({ entrySeq: debit.entrySeq, lotId: lot.id, micros });
        owed -= micros;
      }
      debt += owed;
    }
    for (const lot of order) {
      const remaining = left.get(lot.id) ?? lot.remainingMicros;
      if (remaining === lot.remainingMicros) continue;
      this.#store.updateLot(lot.id, {
        remainingMicros: remaining,
        expiredAt: lot.expiredAt,
        expirySeq: lot.expirySeq,
      });
    }
    this.#store.insertLotDraws(rows);
    if (debt > 0) this.#store.setCounter(DEBT, addMicros(this.debtMicros(), debt));
    return draws;
  }

  /** Marks a lot expired, its remainder gone (the caller posted the expiry entry, if any). */
  markExpired(lot: LotRow, now: number, expirySeq: number | null): void {
    this.#store.updateLot(lot.id, { remainingMicros: 0, expiredAt: now, expirySeq });
  }

  /**
   * The live lots. Before an account's first lot work its whole balance is the opening lot: shown
   * as it will be created, without writing it (a read changes nothing).
   */
  live(postedMicros: number, now: number): LotRow[] {
    if (this.opened) return this.#store.listLiveLots();
    if (postedMicros <= 0) return [];
    return [
      {
        id: LEGACY_LOT_ID,
        source: "legacy",
        priority: DEFAULT_GRANT_PRIORITY,
        grantedMicros: postedMicros,
        remainingMicros: postedMicros,
        expiresAt: null,
        createdAt: now,
        entrySeq: 0,
        fundingRef: null,
        expiredAt: null,
        expirySeq: null,
      },
    ];
  }

  /** The lots' side of `reconcile()`: their remainders less the debt must equal the balance. */
  problems(postedMicros: number): string[] {
    if (!this.opened) return [];
    const lots = this.#store.listLiveLots();
    const remaining = lots.reduce((sum, lot) => sum + lot.remainingMicros, 0);
    const debt = this.debtMicros();
    const problems: string[] = [];
    if (remaining - debt !== postedMicros) {
      problems.push(`lots ${remaining} − debt ${debt} ≠ posted ${postedMicros}`);
    }
    if (debt > 0 && remaining > 0) problems.push(`debt ${debt} while lots hold ${remaining}`);
    if (debt < 0) problems.push(`negative debt ${debt}`);
    return problems;
  }
}
