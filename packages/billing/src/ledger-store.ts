/**
 * The storage contract of {@link CreditLedger}: a narrow, synchronous, row-oriented interface that
 * the BillingAccount Durable Object implements over its SQLite (`ctx.storage.sql.exec`,
 * `ctx.storage.transactionSync`) and {@link MemoryLedgerStore} implements for tests. Rows are plain
 * objects of strings, numbers and nulls, one per table row; booleans are 0/1 as SQLite returns them.
 */

/** Kinds of ledger entry. `usage` entries are posted only by `settle`. */
export type EntryKind = "grant" | "topup" | "usage" | "adjustment";

/** One append-only ledger entry. */
export interface EntryRow {
  /** Assigned by the store on insert: 1, 2, 3, ... in insertion order. */
  seq: number;
  kind: EntryKind;
  /** Signed: credits are positive, usage and refunds negative. */
  amountMicros: number;
  /** The posted balance after this entry. */
  balanceAfterMicros: number;
  /** Unique across all entries. */
  idempotencyKey: string;
  /** The request id for usage; the Stripe object for top-ups and adjustments. */
  reference: string | null;
  memo: string | null;
  createdAt: number;
}

export type NewEntryRow = Omit<EntryRow, "seq">;

/** Lifecycle of a reservation: `open` → exactly one of `settled`, `released`, `expired`. */
export type HoldStatus = "open" | "settled" | "released" | "expired";

/** A reservation of credits for one request. */
export interface HoldRow {
  /** Unique: one hold per request. */
  requestId: string;
  amountMicros: number;
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
  status: HoldStatus;
  createdAt: number;
  expiresAt: number;
  resolvedAt: number | null;
}

/**
 * How a settle related to a hold: `settled` resolved an open hold; `settled_late` arrived after its
 * hold expired and was charged without one; `metered` had no hold (non-billable usage).
 */
export type UsageOutcome = "settled" | "settled_late" | "metered";

/** One settled model request, billable or not. */
export interface UsageRow {
  /** Unique: one usage event per request. */
  requestId: string;
  memberId: string | null;
  projectId: string | null;
  sessionId: string | null;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  reasoningTokens: number;
  /** What the provider charged us. */
  costMicros: number;
  /** What the org was charged (0 when not billable). */
  priceMicros: number;
  billable: 0 | 1;
  /** JSON array of the provider's generation ids. */
  generationIds: string;
  outcome: UsageOutcome;
  /** The hold's amount when there was one. */
  holdMicros: number | null;
  createdAt: number;
}

/**
 * Where a lot of credits came from. `legacy` is the opening lot an account's balance became when
 * lots were introduced; `adjustment` is a positive adjustment no lot of its own took back.
 */
export type GrantSource =
  | "signup"
  | "promotion"
  | "top_up"
  | "monthly_allowance"
  | "legacy"
  | "adjustment";

export const GRANT_SOURCES: readonly GrantSource[] = [
  "signup",
  "promotion",
  "top_up",
  "monthly_allowance",
  "legacy",
  "adjustment",
];

/**
 * A lot: the credits one funding entry brought (a grant), and what is left of them. Usage draws
 * lots in draw order (soonest `expiresAt` first, no expiry last; then lower `priority`; then
 * oldest); the alarm expires a lot once, posting an entry of minus its remainder.
 */
export interface LotRow {
  /** `grant-<seq of its funding entry>`, or `grant-legacy`. */
  id: string;
  source: GrantSource;
  /** Lower draws first (Stripe's convention); 50 by default. */
  priority: number;
  /** The funding entry's amount. */
  grantedMicros: number;
  /** What is left: never below 0, never above `grantedMicros`. */
  remainingMicros: number;
  expiresAt: number | null;
  createdAt: number;
  /** The funding entry (0 for the legacy lot). */
  entrySeq: number;
  /** What refunds and disputes of this funding name it by (a top-up's payment intent). */
  fundingRef: string | null;
  /** When the alarm expired it; null while live. */
  expiredAt: number | null;
  /** The expiry entry, when it posted one (a lot expired empty posts none). */
  expirySeq: number | null;
}

/** One lot's share of one debit entry. */
export interface LotDrawRow {
  entrySeq: number;
  lotId: string;
  micros: number;
}

export type AlertKind =
  | "org_monthly_spend"
  | "member_daily_spend"
  | "low_balance"
  | "low_runway"
  | "auto_top_up_failed";

/** A threshold alert that fired; its key makes it fire once per limit, threshold and period. */
export interface AlertRow {
  /** Unique: kind, period, member, threshold and limit value. */
  key: string;
  kind: AlertKind;
  /** The member for `member_daily_spend`, otherwise null. */
  memberId: string | null;
  /** `2026-11` (UTC month), `2026-11-29` (UTC day), or `entry-<seq>` (since the last credit). */
  period: string;
  /** 50, 80, 100, ... for spend alerts; null for low balance. */
  thresholdPct: number | null;
  /** The spend limit, or the low-balance threshold. */
  limitMicros: number;
  /** Committed spend (settled + open holds), or the available balance, when it fired. */
  levelMicros: number;
  firedAt: number;
}

/**
 * Synchronous storage for one organization's ledger. {@link CreditLedger} calls every mutation
 * inside `transact`, and checks uniqueness itself before inserting (a store may still enforce it).
 */
export interface LedgerStore {
  /**
   * Runs `fn` atomically: if it throws, none of its writes remain. A nested call must work (the
   * route may wrap a ledger call in its own transaction); the ledger never catches an error inside
   * a transaction, so an inner call may simply join the outer one.
   */
  transact<T>(fn: () => T): T;

  insertEntry(entry: NewEntryRow): EntryRow;
  /** Inserts entries in the given order (ascending `seq`), in one statement where it can. */
  insertEntries(entries: readonly NewEntryRow[]): EntryRow[];
  getEntryByKey(idempotencyKey: string): EntryRow | null;
  /** Entries with `seq > afterSeq`, ascending, at most `limit`. */
  listEntries(afterSeq: number, limit: number): EntryRow[];
  /** Sum of `amountMicros` over all entries (0 when none). */
  sumEntries(): number;
  /** Sum of `amountMicros` over entries with this `reference` (0 when none). */
  sumEntriesByReference(reference: string): number;

  insertHold(hold: HoldRow): void;
  getHold(requestId: string): HoldRow | null;
  /** The holds of these request ids, in any order (ids without one are left out). */
  getHolds(requestIds: readonly string[]): HoldRow[];
  /** Moves an open hold to a final status; a no-op when the hold is not open. */
  resolveHold(requestId: string, status: Exclude<HoldStatus, "open">, resolvedAt: number): void;
  /**
   * Changes an open hold's amount and expiry (a lease renewed, drawn on or shrunk); a no-op when
   * the hold is not open.
   */
  resizeHold(requestId: string, amountMicros: number, expiresAt: number): void;
  /** How many open holds are session leases (ids starting `lease:`). */
  countOpenLeases(): number;
  /** The sum of one member's open holds (leases included). */
  sumOpenHolds(memberId: string): number;
  /** The sum of the open holds of one project's calls and leases (its limits count them). */
  sumOpenProjectHolds(projectId: string): number;
  /** Every hold whose status is `open` (few: one per in-flight model call or session lease). */
  listOpenHolds(): HoldRow[];

  insertUsage(usage: UsageRow): void;
  /** Inserts usage events, in one statement where it can (a report settles many at once). */
  insertUsages(usages: readonly UsageRow[]): void;
  getUsage(requestId: string): UsageRow | null;
  /** The usage events of these request ids, in any order (ids without one are left out). */
  getUsages(requestIds: readonly string[]): UsageRow[];

  /** A named integer (cached totals, spend per period); 0 when never set. */
  getCounter(name: string): number;
  setCounter(name: string, value: number): void;
  /**
   * Reads these counters at once where it can, so that a transaction's later `getCounter` of them
   * costs nothing (a lease report reads a handful); a no-op where reads are free.
   */
  loadCounters(names: readonly string[]): void;

  getAlert(key: string): AlertRow | null;
  insertAlert(alert: AlertRow): void;

  insertLot(lot: LotRow): void;
  getLot(id: string): LotRow | null;
  /** The unexpired lot of a funding reference (the newest if several), or null. */
  getLotByFundingRef(fundingRef: string): LotRow | null;
  /** Unexpired lots with credits left, in draw order. */
  listLiveLots(): LotRow[];
  /** Unexpired lots whose `expiresAt ≤ now`, soonest first. */
  listDueLots(now: number): LotRow[];
  /** The soonest `expiresAt` among unexpired lots, or null. */
  nextLotExpiry(): number | null;
  /** Records lots' shares of debit entries, in one statement where it can. */
  insertLotDraws(draws: readonly LotDrawRow[]): void;
  updateLot(id: string, change: Pick<LotRow, "remainingMicros" | "expiredAt" | "expirySeq">): void;
}
