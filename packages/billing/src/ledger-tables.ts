/**
 * The ledger's tables in SQLite: the schema `SqlLedgerStore` runs on inside the BillingAccount
 * Durable Object, and how each row reads back as the ledger's row types (every column checked, so
 * a table that drifted from its type fails loudly instead of miscounting money).
 */

import {
  type AlertKind,
  type AlertRow,
  type EntryKind,
  type EntryRow,
  GRANT_SOURCES,
  type GrantSource,
  type HoldRow,
  type HoldStatus,
  type LotRow,
  type UsageOutcome,
  type UsageRow,
} from "./ledger-store.ts";
import { num, numOrNull, oneOf, type Row, type SqlValue, str, strOrNull } from "./sql.ts";

/**
 * Suggested SQLite schema for a {@link LedgerStore} inside the BillingAccount Durable Object, one
 * statement per table or index (`CREATE ... IF NOT EXISTS`, safe to run on every start).
 */
export const LEDGER_SQLITE_SCHEMA: readonly string[] = [
  `CREATE TABLE IF NOT EXISTS ledger_entries (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('grant', 'topup', 'usage', 'adjustment')),
    amount_micros INTEGER NOT NULL,
    balance_after_micros INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    reference TEXT,
    memo TEXT,
    created_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_entries_reference ON ledger_entries (reference)",
  `CREATE TABLE IF NOT EXISTS ledger_holds (
    request_id TEXT PRIMARY KEY,
    amount_micros INTEGER NOT NULL CHECK (amount_micros > 0),
    member_id TEXT NOT NULL,
    project_id TEXT,
    session_id TEXT,
    status TEXT NOT NULL CHECK (status IN ('open', 'settled', 'released', 'expired')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    resolved_at INTEGER
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_holds_open ON ledger_holds (expires_at) WHERE status = 'open'",
  `CREATE TABLE IF NOT EXISTS usage_events (
    request_id TEXT PRIMARY KEY,
    member_id TEXT,
    project_id TEXT,
    session_id TEXT,
    model TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cached_prompt_tokens INTEGER NOT NULL,
    reasoning_tokens INTEGER NOT NULL,
    cost_micros INTEGER NOT NULL,
    price_micros INTEGER NOT NULL,
    billable INTEGER NOT NULL CHECK (billable IN (0, 1)),
    generation_ids TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('settled', 'settled_late', 'metered')),
    hold_micros INTEGER,
    created_at INTEGER NOT NULL
  )`,
  "CREATE INDEX IF NOT EXISTS usage_events_created ON usage_events (created_at)",
  "CREATE INDEX IF NOT EXISTS usage_events_member ON usage_events (member_id, created_at)",
  "CREATE INDEX IF NOT EXISTS usage_events_project ON usage_events (project_id, created_at)",
  "CREATE INDEX IF NOT EXISTS usage_events_session ON usage_events (session_id, created_at)",
  `CREATE TABLE IF NOT EXISTS ledger_counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
  )`,
  `CREATE TABLE IF NOT EXISTS ledger_alerts (
    key TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    member_id TEXT,
    period TEXT NOT NULL,
    threshold_pct INTEGER,
    limit_micros INTEGER NOT NULL,
    level_micros INTEGER NOT NULL,
    fired_at INTEGER NOT NULL
  )`,
  // Lots (grants): added after the tables above, so existing accounts gain it on their next start;
  // the ledger turns an existing balance into one opening lot the first time it touches lots.
  `CREATE TABLE IF NOT EXISTS ledger_lots (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    priority INTEGER NOT NULL,
    granted_micros INTEGER NOT NULL CHECK (granted_micros > 0),
    remaining_micros INTEGER NOT NULL CHECK (remaining_micros >= 0 AND remaining_micros <= granted_micros),
    expires_at INTEGER,
    created_at INTEGER NOT NULL,
    entry_seq INTEGER NOT NULL,
    funding_ref TEXT,
    expired_at INTEGER,
    expiry_seq INTEGER
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_lots_live ON ledger_lots (expires_at) WHERE expired_at IS NULL",
  "CREATE INDEX IF NOT EXISTS ledger_lots_entry ON ledger_lots (entry_seq)",
  // Each lot's share of each debit entry (usage, refunds, expiries): the usage CSV's grants.
  `CREATE TABLE IF NOT EXISTS ledger_lot_draws (
    entry_seq INTEGER NOT NULL,
    lot_id TEXT NOT NULL,
    micros INTEGER NOT NULL CHECK (micros > 0),
    PRIMARY KEY (entry_seq, lot_id)
  )`,
  "CREATE INDEX IF NOT EXISTS ledger_lots_funding ON ledger_lots (funding_ref) WHERE funding_ref IS NOT NULL",
];

const ENTRY_KINDS: readonly EntryKind[] = ["grant", "topup", "usage", "adjustment"];
const HOLD_STATUSES: readonly HoldStatus[] = ["open", "settled", "released", "expired"];
const OUTCOMES: readonly UsageOutcome[] = ["settled", "settled_late", "metered"];
const ALERT_KINDS: readonly AlertKind[] = [
  "org_monthly_spend",
  "member_daily_spend",
  "low_balance",
  "low_runway",
  "auto_top_up_failed",
];

export function toEntry(row: Row): EntryRow {
  return {
    seq: num(row, "seq"),
    kind: oneOf(row, "kind", ENTRY_KINDS),
    amountMicros: num(row, "amount_micros"),
    balanceAfterMicros: num(row, "balance_after_micros"),
    idempotencyKey: str(row, "idempotency_key"),
    reference: strOrNull(row, "reference"),
    memo: strOrNull(row, "memo"),
    createdAt: num(row, "created_at"),
  };
}

export function toHold(row: Row): HoldRow {
  return {
    requestId: str(row, "request_id"),
    amountMicros: num(row, "amount_micros"),
    memberId: str(row, "member_id"),
    projectId: strOrNull(row, "project_id"),
    sessionId: strOrNull(row, "session_id"),
    status: oneOf(row, "status", HOLD_STATUSES),
    createdAt: num(row, "created_at"),
    expiresAt: num(row, "expires_at"),
    resolvedAt: numOrNull(row, "resolved_at"),
  };
}

export function toUsage(row: Row): UsageRow {
  const billable = num(row, "billable");
  return {
    requestId: str(row, "request_id"),
    memberId: strOrNull(row, "member_id"),
    projectId: strOrNull(row, "project_id"),
    sessionId: strOrNull(row, "session_id"),
    model: str(row, "model"),
    promptTokens: num(row, "prompt_tokens"),
    completionTokens: num(row, "completion_tokens"),
    cachedPromptTokens: num(row, "cached_prompt_tokens"),
    reasoningTokens: num(row, "reasoning_tokens"),
    costMicros: num(row, "cost_micros"),
    priceMicros: num(row, "price_micros"),
    billable: billable === 1 ? 1 : 0,
    generationIds: str(row, "generation_ids"),
    outcome: oneOf(row, "outcome", OUTCOMES),
    holdMicros: numOrNull(row, "hold_micros"),
    createdAt: num(row, "created_at"),
  };
}

export function toAlert(row: Row): AlertRow {
  return {
    key: str(row, "key"),
    kind: oneOf(row, "kind", ALERT_KINDS),
    memberId: strOrNull(row, "member_id"),
    period: str(row, "period"),
    thresholdPct: numOrNull(row, "threshold_pct"),
    limitMicros: num(row, "limit_micros"),
    levelMicros: num(row, "level_micros"),
    firedAt: num(row, "fired_at"),
  };
}

export function toLot(row: Row): LotRow {
  return {
    id: str(row, "id"),
    source: oneOf<GrantSource>(row, "source", GRANT_SOURCES),
    priority: num(row, "priority"),
    grantedMicros: num(row, "granted_micros"),
    remainingMicros: num(row, "remaining_micros"),
    expiresAt: numOrNull(row, "expires_at"),
    createdAt: num(row, "created_at"),
    entrySeq: num(row, "entry_seq"),
    fundingRef: strOrNull(row, "funding_ref"),
    expiredAt: numOrNull(row, "expired_at"),
    expirySeq: numOrNull(row, "expiry_seq"),
  };
}

/** The columns of `usage_events`, in the order `usageValues` gives a row's values. */
export const USAGE_COLUMNS = [
  "request_id",
  "member_id",
  "project_id",
  "session_id",
  "model",
  "prompt_tokens",
  "completion_tokens",
  "cached_prompt_tokens",
  "reasoning_tokens",
  "cost_micros",
  "price_micros",
  "billable",
  "generation_ids",
  "outcome",
  "hold_micros",
  "created_at",
] as const;

/** A usage row's values in the order of `USAGE_COLUMNS`. */
export function usageValues(usage: UsageRow): SqlValue[] {
  return [
    usage.requestId,
    usage.memberId,
    usage.projectId,
    usage.sessionId,
    usage.model,
    usage.promptTokens,
    usage.completionTokens,
    usage.cachedPromptTokens,
    usage.reasoningTokens,
    usage.costMicros,
    usage.priceMicros,
    usage.billable,
    usage.generationIds,
    usage.outcome,
    usage.holdMicros,
    usage.createdAt,
  ];
}
