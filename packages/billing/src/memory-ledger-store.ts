import type {
  AlertRow,
  EntryRow,
  HoldRow,
  HoldStatus,
  LedgerStore,
  LotDrawRow,
  LotRow,
  NewEntryRow,
  UsageRow,
} from "./ledger-store.ts";

/**
 * An in-memory {@link LedgerStore} with the same semantics as the SQLite one: unique keys are
 * enforced (an insert that breaks one throws), rows are copied in and out so callers never alias
 * stored state, and `transact` rolls every write back when its callback throws.
 */
export class MemoryLedgerStore implements LedgerStore {
  readonly #entries: EntryRow[] = [];
  readonly #entriesByKey = new Map<string, EntryRow>();
  readonly #holds = new Map<string, HoldRow>();
  readonly #usage = new Map<string, UsageRow>();
  readonly #counters = new Map<string, number>();
  readonly #alerts = new Map<string, AlertRow>();
  readonly #lots = new Map<string, LotRow>();
  readonly #draws: LotDrawRow[] = [];
  /** Undo actions of the writes made inside the outermost open transaction, newest last. */
  #undo: (() => void)[] | null = null;

  transact<T>(fn: () => T): T {
    const outer = this.#undo === null;
    if (outer) this.#undo = [];
    const undo = this.#undo ?? [];
    const mark = undo.length;
    try {
      const result = fn();
      if (outer) this.#undo = null;
      return result;
    } catch (error) {
      // Roll back to where this (possibly nested) transaction began, like a SQLite savepoint.
      while (undo.length > mark) undo.pop()?.();
      if (outer) this.#undo = null;
      throw error;
    }
  }

  #onUndo(action: () => void): void {
    this.#undo?.push(action);
  }

  insertEntry(entry: NewEntryRow): EntryRow {
    if (this.#entriesByKey.has(entry.idempotencyKey)) {
      throw new Error(`UNIQUE constraint failed: idempotency_key ${entry.idempotencyKey}`);
    }
    const row: EntryRow = { ...entry, seq: this.#entries.length + 1 };
    this.#entries.push(row);
    this.#entriesByKey.set(row.idempotencyKey, row);
    this.#onUndo(() => {
      this.#entries.pop();
      this.#entriesByKey.delete(row.idempotencyKey);
    });
    return { ...row };
  }

  getEntryByKey(idempotencyKey: string): EntryRow | null {
    const row = this.#entriesByKey.get(idempotencyKey);
    return row === undefined ? null : { ...row };
  }

  listEntries(afterSeq: number, limit: number): EntryRow[] {
    return this.#entries
      .filter((row) => row.seq > afterSeq)
      .slice(0, limit)
      .map((row) => ({ ...row }));
  }

  sumEntries(): number {
    return this.#entries.reduce((sum, row) => sum + row.amountMicros, 0);
  }

  sumEntriesByReference(reference: string): number {
    return this.#entries
      .filter((row) => row.reference === reference)
      .reduce((sum, row) => sum + row.amountMicros, 0);
  }

  insertHold(hold: HoldRow): void {
    if (hold.amountMicros <= 0) throw new Error("CHECK constraint failed: amount_micros > 0");
    if (this.#holds.has(hold.requestId)) {
      throw new Error(`UNIQUE constraint failed: hold ${hold.requestId}`);
    }
    this.#holds.set(hold.requestId, { ...hold });
    this.#onUndo(() => this.#holds.delete(hold.requestId));
  }

  insertEntries(entries: readonly NewEntryRow[]): EntryRow[] {
    // All or none, as one SQL statement is.
    return this.transact(() => entries.map((entry) => this.insertEntry(entry)));
  }

  getHolds(requestIds: readonly string[]): HoldRow[] {
    return [...new Set(requestIds)].flatMap((id) => this.getHold(id) ?? []);
  }

  insertUsages(usages: readonly UsageRow[]): void {
    this.transact(() => {
      for (const usage of usages) this.insertUsage(usage);
    });
  }

  getUsages(requestIds: readonly string[]): UsageRow[] {
    return [...new Set(requestIds)].flatMap((id) => this.getUsage(id) ?? []);
  }

  getHold(requestId: string): HoldRow | null {
    const row = this.#holds.get(requestId);
    return row === undefined ? null : { ...row };
  }

  resolveHold(requestId: string, status: Exclude<HoldStatus, "open">, resolvedAt: number): void {
    const row = this.#holds.get(requestId);
    if (row === undefined || row.status !== "open") return;
    const before = { ...row };
    this.#holds.set(requestId, { ...row, status, resolvedAt });
    this.#onUndo(() => this.#holds.set(requestId, before));
  }

  resizeHold(requestId: string, amountMicros: number, expiresAt: number): void {
    const row = this.#holds.get(requestId);
    if (row === undefined || row.status !== "open") return;
    if (amountMicros <= 0) throw new Error("CHECK constraint failed: amount_micros > 0");
    const before = { ...row };
    this.#holds.set(requestId, { ...row, amountMicros, expiresAt });
    this.#onUndo(() => this.#holds.set(requestId, before));
  }

  countOpenLeases(): number {
    return this.listOpenHolds().filter((row) => row.requestId.startsWith("lease:")).length;
  }

  sumOpenHolds(memberId: string): number {
    return this.listOpenHolds()
      .filter((row) => row.memberId === memberId)
      .reduce((sum, row) => sum + row.amountMicros, 0);
  }

  sumOpenProjectHolds(projectId: string): number {
    return this.listOpenHolds()
      .filter((row) => row.projectId === projectId)
      .reduce((sum, row) => sum + row.amountMicros, 0);
  }

  listOpenHolds(): HoldRow[] {
    return [...this.#holds.values()]
      .filter((row) => row.status === "open")
      .map((row) => ({ ...row }));
  }

  insertUsage(usage: UsageRow): void {
    if (this.#usage.has(usage.requestId)) {
      throw new Error(`UNIQUE constraint failed: usage ${usage.requestId}`);
    }
    this.#usage.set(usage.requestId, { ...usage });
    this.#onUndo(() => this.#usage.delete(usage.requestId));
  }

  getUsage(requestId: string): UsageRow | null {
    const row = this.#usage.get(requestId);
    return row === undefined ? null : { ...row };
  }

  loadCounters(_names: readonly string[]): void {
    // Reads are free here.
  }

  getCounter(name: string): number {
    return this.#counters.get(name) ?? 0;
  }

  setCounter(name: string, value: number): void {
    const before = this.#counters.get(name);
    this.#counters.set(name, value);
    this.#onUndo(() => {
      if (before === undefined) this.#counters.delete(name);
      else this.#counters.set(name, before);
    });
  }

  insertLot(lot: LotRow): void {
    if (this.#lots.has(lot.id)) throw new Error(`UNIQUE constraint failed: lot ${lot.id}`);
    this.#lots.set(lot.id, { ...lot });
    this.#onUndo(() => this.#lots.delete(lot.id));
  }

  getLot(id: string): LotRow | null {
    const lot = this.#lots.get(id);
    return lot === undefined ? null : { ...lot };
  }

  getLotByFundingRef(fundingRef: string): LotRow | null {
    const found = [...this.#lots.values()]
      .filter((lot) => lot.expiredAt === null && lot.fundingRef === fundingRef)
      .sort((a, b) => b.entrySeq - a.entrySeq)[0];
    return found === undefined ? null : { ...found };
  }

  listLiveLots(): LotRow[] {
    return [...this.#lots.values()]
      .filter((lot) => lot.expiredAt === null && lot.remainingMicros > 0)
      .sort(drawOrder)
      .map((lot) => ({ ...lot }));
  }

  listDueLots(now: number): LotRow[] {
    return [...this.#lots.values()]
      .filter((lot) => lot.expiredAt === null && lot.expiresAt !== null && lot.expiresAt <= now)
      .sort(drawOrder)
      .map((lot) => ({ ...lot }));
  }

  nextLotExpiry(): number | null {
    let next: number | null = null;
    for (const lot of this.#lots.values()) {
      if (lot.expiredAt !== null || lot.expiresAt === null) continue;
      if (next === null || lot.expiresAt < next) next = lot.expiresAt;
    }
    return next;
  }

  updateLot(id: string, change: Pick<LotRow, "remainingMicros" | "expiredAt" | "expirySeq">): void {
    const lot = this.#lots.get(id);
    if (lot === undefined) return;
    const before = { ...lot };
    this.#lots.set(id, { ...lot, ...change });
    this.#onUndo(() => this.#lots.set(id, before));
  }

  insertLotDraws(draws: readonly LotDrawRow[]): void {
    if (draws.length === 0) return;
    const mark = this.#draws.length;
    this.#draws.push(...draws.map((draw) => ({ ...draw })));
    this.#onUndo(() => this.#draws.splice(mark));
  }

  /** Every lot draw, in the order recorded (tests). */
  allLotDraws(): LotDrawRow[] {
    return this.#draws.map((draw) => ({ ...draw }));
  }

  /** Every lot, expired or not (tests). */
  allLots(): LotRow[] {
    return [...this.#lots.values()].sort(drawOrder).map((lot) => ({ ...lot }));
  }

  getAlert(key: string): AlertRow | null {
    const row = this.#alerts.get(key);
    return row === undefined ? null : { ...row };
  }

  insertAlert(alert: AlertRow): void {
    if (this.#alerts.has(alert.key))
      throw new Error(`UNIQUE constraint failed: alert ${alert.key}`);
    this.#alerts.set(alert.key, { ...alert });
    this.#onUndo(() => this.#alerts.delete(alert.key));
  }

  // Test and inspection helpers, not part of LedgerStore.

  /** Every hold, in insertion order. */
  allHolds(): HoldRow[] {
    return [...this.#holds.values()].map((row) => ({ ...row }));
  }

  /** Every usage event, in insertion order. */
  allUsage(): UsageRow[] {
    return [...this.#usage.values()].map((row) => ({ ...row }));
  }

  /** Every alert that fired, in order. */
  allAlerts(): AlertRow[] {
    return [...this.#alerts.values()].map((row) => ({ ...row }));
  }

  /** Every counter. */
  counters(): ReadonlyMap<string, number> {
    return new Map(this.#counters);
  }
}

/** The draw order of lots: soonest expiry first (none last), then lower priority, then oldest. */
export function drawOrder(a: LotRow, b: LotRow): number {
  if (a.expiresAt !== b.expiresAt) {
    if (a.expiresAt === null) return 1;
    if (b.expiresAt === null) return -1;
    return a.expiresAt - b.expiresAt;
  }
  if (a.priority !== b.priority) return a.priority - b.priority;
  return a.entrySeq - b.entrySeq;
}
