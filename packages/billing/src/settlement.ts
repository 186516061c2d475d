/**
 * A model call's settlement, as both ways of settling take it (a call's own hold: call-holds.ts;
 * a call drawn on a session's lease: lease-reports.ts): what a settle says, how it is checked,
 * the usage row it writes, and whether a replay says the same. A call is settled once under its
 * request id: a replay with the same parameters answers what the first did, another is a conflict.
 */

import { assertCount, assertId, assertTime } from "./input-checks.ts";
import type { UsageOutcome, UsageRow } from "./ledger-store.ts";
import { assertNonNegativeMicros } from "./money.ts";
import type { TokenUsage } from "./pricing.ts";

/** Who a request belongs to; only used by a settle that has no hold. */
export interface Attribution {
  memberId: string;
  projectId: string | null;
  sessionId: string | null;
}

export interface SettleInput {
  requestId: string;
  /** What the provider charged (its reported cost, or the price table's cost). */
  costMicros: number;
  /** What the org is charged: the cost with markup. Must be 0 when `billable` is false. */
  priceMicros: number;
  tokens: TokenUsage;
  model: string;
  generationIds: readonly string[];
  billable: boolean;
  now: number;
  /**
   * When the call was made (its caller's clock), which dates its usage: a call reported later (a
   * lease's batch, a retry after a reset) counts when it happened, so a read that asks every
   * session to report first sees it inside its window. Never later than `now`, nor earlier than
   * `MAX_USAGE_AGE_MS` before it; `now` when absent.
   */
  at?: number;
  /** Required for a settle without a hold; when a hold exists it must match the hold's. */
  attribution?: Attribution;
}

/** How far before the settle a call's own time may date its usage (a day). */
export const MAX_USAGE_AGE_MS = 86_400_000;

/** The time a call's usage is dated by (`SettleInput.at`, bounded). */
export function usageTime(input: SettleInput): number {
  const at = input.at ?? input.now;
  return Math.min(input.now, Math.max(at, input.now - MAX_USAGE_AGE_MS));
}

/** The idempotency key of a call's usage entry. */
export function usageKey(requestId: string): string {
  return `usage:${requestId}`;
}

/**
 * The part of a charge no open hold covered: all of a late settle's, none of a metered call's,
 * and what a settled call cost above its hold.
 */
export function overrun(outcome: UsageOutcome, chargeMicros: number, holdMicros: number): number {
  if (outcome === "settled_late") return chargeMicros;
  if (outcome === "metered") return 0;
  return Math.max(0, chargeMicros - holdMicros);
}

/** Whether a settle names the member, project and session of a hold or of an earlier settle. */
export function sameAttribution(row: Attribution | UsageRow, input: SettleInput): boolean {
  const who = input.attribution;
  return (
    who === undefined ||
    (row.memberId === who.memberId &&
      row.projectId === who.projectId &&
      row.sessionId === who.sessionId)
  );
}

/** Checks a settle's fields (a `RangeError` is a caller bug: input-checks.ts). */
export function assertSettle(input: SettleInput): void {
  assertId(input.requestId, "requestId");
  assertNonNegativeMicros(input.costMicros, "costMicros");
  assertNonNegativeMicros(input.priceMicros, "priceMicros");
  assertTime(input.now, "now");
  if (input.at !== undefined) assertTime(input.at, "at");
  assertCount(input.tokens.promptTokens, "promptTokens");
  assertCount(input.tokens.completionTokens, "completionTokens");
  assertCount(input.tokens.cachedPromptTokens, "cachedPromptTokens");
  assertCount(input.tokens.reasoningTokens, "reasoningTokens");
  if (!input.billable && input.priceMicros !== 0) {
    throw new RangeError("a non-billable settle must have priceMicros 0");
  }
  if (input.attribution !== undefined) assertId(input.attribution.memberId, "memberId");
}

/** The usage event a settle writes, dated by `usageTime`. */
export function usageRow(
  input: SettleInput,
  who: Attribution | null,
  outcome: UsageOutcome,
  holdMicros: number | null,
): UsageRow {
  return {
    requestId: input.requestId,
    memberId: who?.memberId ?? null,
    projectId: who?.projectId ?? null,
    sessionId: who?.sessionId ?? null,
    model: input.model,
    promptTokens: input.tokens.promptTokens,
    completionTokens: input.tokens.completionTokens,
    cachedPromptTokens: input.tokens.cachedPromptTokens,
    reasoningTokens: input.tokens.reasoningTokens,
    costMicros: input.costMicros,
    priceMicros: input.billable ? input.priceMicros : 0,
    billable: input.billable ? 1 : 0,
    generationIds: JSON.stringify(input.generationIds),
    outcome,
    holdMicros,
    createdAt: usageTime(input),
  };
}

/** Whether a settle says what the one already recorded said (a replay), or conflicts with it. */
export function sameSettle(previous: UsageRow, input: SettleInput): boolean {
  return (
    previous.costMicros === input.costMicros &&
    previous.priceMicros === input.priceMicros &&
    previous.billable === (input.billable ? 1 : 0) &&
    previous.model === input.model &&
    previous.promptTokens === input.tokens.promptTokens &&
    previous.completionTokens === input.tokens.completionTokens &&
    previous.cachedPromptTokens === input.tokens.cachedPromptTokens &&
    previous.reasoningTokens === input.tokens.reasoningTokens &&
    previous.generationIds === JSON.stringify(input.generationIds) &&
    sameAttribution(previous, input)
  );
}
