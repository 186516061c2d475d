import type {
  Page,
  ReversalExcess,
  UnrecognizedReason,
  UnrecognizedStripeEvent,
} from "@parley/shared";
import { iso, keysetCursor } from "./pagination.ts";

/**
 * The operator's lists of Stripe's side (routes/operator.ts), newest first, keyed by time and id
 * (`<ms>.<id>` cursors): what the webhook acknowledged without acting on it as asked, and the
 * payments whose reversals at Stripe passed what they paid (migration 0017).
 */

interface UnrecognizedRow {
  event_id: string;
  event_type: string;
  reason: UnrecognizedReason;
  object_id: string;
  payment_intent_id: string | null;
  claimed_org_id: string | null;
  amount_micros: number | null;
  received_at: number;
  resolved_at: number | null;
}

export async function unrecognizedEvents(
  db: D1Database,
  cursor: string | undefined,
  limit: number,
): Promise<Page<UnrecognizedStripeEvent>> {
  const after = cursor === undefined ? null : keysetCursor(cursor);
  const { results } = await db
    .prepare(
      `SELECT event_id, event_type, reason, object_id, payment_intent_id, claimed_org_id,
         amount_micros, received_at, resolved_at
       FROM stripe_unrecognized
       WHERE ?1 IS NULL OR received_at < ?1 OR (received_at = ?1 AND event_id < ?2)
       ORDER BY received_at DESC, event_id DESC LIMIT ?3`,
    )
    .bind(after?.at ?? null, after?.key ?? "", limit + 1)
    .all<UnrecognizedRow>();
  const rows = results.slice(0, limit);
  const last = rows.at(-1);
  return {
    items: rows.map((row) => ({
      eventId: row.event_id,
      type: row.event_type,
      reason: row.reason,
      objectId: row.object_id,
      paymentIntentId: row.payment_intent_id,
      claimedOrgId: row.claimed_org_id,
      amountMicros: row.amount_micros,
      receivedAt: iso(row.received_at),
      resolvedAt: row.resolved_at === null ? null : iso(row.resolved_at),
    })),
    nextCursor: results.length > limit && last ? `${last.received_at}.${last.event_id}` : null,
  };
}

interface ExcessRow {
  payment_intent_id: string;
  org_id: string;
  amount_micros: number;
  refunded_micros: number;
  disputed_micros: number;
  reversed_micros: number;
  excess_micros: number;
  created_at: number;
}

export async function reversalExcess(
  db: D1Database,
  cursor: string | undefined,
  limit: number,
): Promise<Page<ReversalExcess>> {
  const after = cursor === undefined ? null : keysetCursor(cursor);
  const { results } = await db
    .prepare(
      `SELECT payment_intent_id, org_id, amount_micros, refunded_micros, disputed_micros,
         reversed_micros, excess_micros, created_at
       FROM stripe_payments
       WHERE excess_micros > 0
         AND (?1 IS NULL OR created_at < ?1 OR (created_at = ?1 AND payment_intent_id < ?2))
       ORDER BY created_at DESC, payment_intent_id DESC LIMIT ?3`,
    )
    .bind(after?.at ?? null, after?.key ?? "", limit + 1)
    .all<ExcessRow>();
  const rows = results.slice(0, limit);
  const last = rows.at(-1);
  return {
    items: rows.map((row) => ({
      paymentIntentId: row.payment_intent_id,
      orgId: row.org_id,
      amountMicros: row.amount_micros,
      refundedMicros: row.refunded_micros,
      disputedMicros: row.disputed_micros,
      reversedMicros: row.reversed_micros,
      excessMicros: row.excess_micros,
      createdAt: iso(row.created_at),
    })),
    nextCursor:
      results.length > limit && last ? `${last.created_at}.${last.payment_intent_id}` : null,
  };
}
