/**
 * The ledger's own books over its {@link LedgerStore}: the cached totals (posted, held, the latest
 * funding) and the writes that move them together with their rows. An entry is posted with its
 * lots (a credit opens its lot, a debit takes from lots: lots.ts), a hold is opened, resized and
 * resolved with the held total, and a billable charge moves every spend counter it counts under.
 * The ledger's operations write money only through here, so the totals cannot part from the rows,
 * and `reconcile()` checks that they did not.
 */

import { type Forecast, forecastDays, forecastRunway } from "./forecast.ts";
import {
  FUNDED_AT,
  FUNDED_BALANCE,
  HELD,
  orgDaySpendCounter,
  POSTED,
  spendCounters,
} from "./ledger-counters.ts";
import type { EntryRow, HoldRow, HoldStatus, LedgerStore, LotRow } from "./ledger-store.ts";
import { defaultTerms, type GrantTerms, Lots } from "./lots.ts";
import { addMicros } from "./money.ts";

export interface Balance {
  postedMicros: number;
  heldMicros: number;
  availableMicros: number;
}

export interface ReconcileReport {
  ok: boolean;
  postedMicros: number;
  entriesSumMicros: number;
  heldMicros: number;
  openHoldsSumMicros: number;
  /** Human-readable mismatches; empty when ok. */
  problems: string[];
}

/** One ledger's store with its totals; every write runs inside the caller's store transaction. */
export class LedgerBook {
  readonly store: LedgerStore;
  readonly lots: Lots;

  constructor(store: LedgerStore) {
    this.store = store;
    this.lots = new Lots(store);
  }

  /** Posted, held and available credits, from the cached totals. */
  balance(): Balance {
    const postedMicros = this.store.getCounter(POSTED);
    const heldMicros = this.store.getCounter(HELD);
    return { postedMicros, heldMicros, availableMicros: postedMicros - heldMicros };
  }

  /**
   * Seq of the latest credit entry (0 before any): the balance can only fall below a threshold
   * again after a credit, so it names a threshold crossing (low-balance alerts, auto top-up).
   */
  fundingSeq(): number {
    return this.store.getCounter(FUNDED_AT);
  }

  /** The posted balance right after the latest credit entry (0 before any). */
  fundedBalance(): number {
    return this.store.getCounter(FUNDED_BALANCE);
  }

  /**
   * How long the available balance lasts at the last 7 UTC days' billable spend (forecast.ts),
   * from the org's per-day spend counters.
   */
  forecast(now: number): Forecast {
    const spentMicros = forecastDays(now).reduce(
      (sum, day) => sum + this.store.getCounter(orgDaySpendCounter(day)),
      0,
    );
    return forecastRunway({ availableMicros: this.balance().availableMicros, spentMicros, now });
  }

  /** Adds `delta` to a counter; returns its new value. */
  addCounter(name: string, delta: number): number {
    const value = addMicros(this.store.getCounter(name), delta);
    this.store.setCounter(name, value);
    return value;
  }

  /** A billable charge, counted in every period's spend of the org, the member and the project. */
  addSpend(now: number, memberId: string, projectId: string | null, chargeMicros: number): void {
    for (const name of spendCounters(now, memberId, projectId)) {
      this.addCounter(name, chargeMicros);
    }
  }

  /** Opens the lots from the balance, before the first entry that touches them (lots.ts). */
  openLots(now: number): void {
    this.lots.open(this.store.getCounter(POSTED), now);
  }

  /** The lots whose credits are left, in draw order (the opening lot shown, not written). */
  liveLots(now: number): LotRow[] {
    return this.lots.live(this.store.getCounter(POSTED), now);
  }

  /**
   * Posts one entry and moves the lots with it: a credit opens its lot (`terms`), a debit takes
   * from `lot` (an expiry's own), or from the lot of `fundingRef` first, then in draw order.
   */
  postEntry(
    entry: Omit<EntryRow, "seq" | "balanceAfterMicros">,
    lots: { terms?: GrantTerms; fundingRef?: string | null; lot?: LotRow } = {},
  ): EntryRow {
    this.openLots(entry.createdAt);
    const balanceAfterMicros = this.addCounter(POSTED, entry.amountMicros);
    const row = this.store.insertEntry({ ...entry, balanceAfterMicros });
    if (entry.kind !== "usage" && entry.amountMicros > 0) {
      this.store.setCounter(FUNDED_AT, row.seq);
      this.store.setCounter(FUNDED_BALANCE, balanceAfterMicros);
    }
    if (entry.amountMicros > 0) {
      this.lots.fund(row, lots.terms ?? defaultTerms(entry.kind));
    } else {
      const first =
        lots.lot ??
        (lots.fundingRef ? this.store.getLotByFundingRef(lots.fundingRef) : null) ??
        null;
      this.lots.take(-entry.amountMicros, row.seq, first);
    }
    return row;
  }

  /** Writes a new hold, open and unresolved, and holds its amount; returns its row. */
  openHold(hold: Omit<HoldRow, "status" | "resolvedAt">): HoldRow {
    const row: HoldRow = { ...hold, status: "open", resolvedAt: null };
    this.store.insertHold(row);
    this.addCounter(HELD, row.amountMicros);
    return row;
  }

  /** Resolves an open hold (settled, released, expired): its amount is held no more. */
  resolveHold(hold: HoldRow, status: Exclude<HoldStatus, "open">, now: number): void {
    this.store.resolveHold(hold.requestId, status, now);
    this.addCounter(HELD, -hold.amountMicros);
  }

  /** Changes an open hold's amount and expiry (a lease renewed, drawn on or shrunk). */
  resizeHold(hold: HoldRow, amountMicros: number, expiresAt: number): void {
    this.store.resizeHold(hold.requestId, amountMicros, expiresAt);
    this.addCounter(HELD, amountMicros - hold.amountMicros);
  }

  /**
   * Checks the cached totals against the rows: posted must equal the sum of entries, held the sum
   * of open holds, and the lots the balance. Reads only.
   */
  reconcile(): ReconcileReport {
    const { postedMicros, heldMicros } = this.balance();
    const entriesSumMicros = this.store.sumEntries();
    const openHoldsSumMicros = this.store
      .listOpenHolds()
      .reduce((sum, hold) => sum + hold.amountMicros, 0);
    const problems: string[] = [];
    if (postedMicros !== entriesSumMicros) {
      problems.push(`posted ${postedMicros} ≠ sum of entries ${entriesSumMicros}`);
    }
    if (heldMicros !== openHoldsSumMicros) {
      problems.push(`held ${heldMicros} ≠ sum of open holds ${openHoldsSumMicros}`);
    }
    problems.push(...this.lots.problems(postedMicros));
    return {
      ok: problems.length === 0,
      postedMicros,
      entriesSumMicros,
      heldMicros,
      openHoldsSumMicros,
      problems,
    };
  }
}
