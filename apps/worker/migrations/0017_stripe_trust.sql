-- Credit only what Parley started; a payment's reversals take at most what it paid (issue 28,
-- 2026-12-06; docs/2026-12-06-stripe-trust.md).

-- Every Checkout Session Parley made, for which org and, in payment mode, for how much. A paid
-- session is credited only when it is here, to the org recorded here, never to the org its
-- client_reference_id or metadata names (anyone can open a Payment Link with
-- ?client_reference_id=<org>). A completed setup session saves a card only when it is here too.
CREATE TABLE stripe_checkouts (
  session_id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  mode TEXT NOT NULL CHECK (mode IN ('payment', 'setup')),
  requested_micros INTEGER,
  created_at INTEGER NOT NULL,
  CHECK ((mode = 'payment') = (requested_micros IS NOT NULL))
);

-- Verified Stripe events Parley acknowledged without acting on them as asked, for the platform
-- operator (GET /api/operator/stripe/unrecognized): payments, cards and charges Parley did not
-- start, and refunds or disputes of a payment it has no record of. Such a reversal is kept whole
-- in `held` (its mapped action) and applied when its payment is recorded (`resolved_at`).
-- claimed_org_id: the org the event named, only when shaped like an org id; never trusted.
CREATE TABLE stripe_unrecognized (
  event_id TEXT PRIMARY KEY,
  event_type TEXT NOT NULL,
  reason TEXT NOT NULL,
  object_id TEXT NOT NULL,
  payment_intent_id TEXT,
  claimed_org_id TEXT,
  amount_micros INTEGER,
  held TEXT,
  received_at INTEGER NOT NULL,
  resolved_at INTEGER
);
CREATE INDEX stripe_unrecognized_by_time ON stripe_unrecognized (received_at DESC, event_id DESC);
CREATE INDEX stripe_unrecognized_held ON stripe_unrecognized (payment_intent_id)
  WHERE held IS NOT NULL AND resolved_at IS NULL;

-- What became of each payment, as the org's BillingAccount computed it (packages/billing
-- reversals.ts): disputed and not given back, taken from credits (at most amount_micros), and
-- what Stripe took beyond the payment (GET /api/operator/stripe/excess). reversal_version orders
-- these writes: an older state never overwrites a newer one.
ALTER TABLE stripe_payments ADD COLUMN disputed_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stripe_payments ADD COLUMN reversed_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stripe_payments ADD COLUMN excess_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stripe_payments ADD COLUMN reversal_version INTEGER NOT NULL DEFAULT 0;
CREATE INDEX stripe_payments_excess ON stripe_payments (created_at DESC, payment_intent_id DESC)
  WHERE excess_micros > 0;
-- Payments from before: a dispute was a flag (the full amount, as the webhook then debited it),
-- and the ledger took every refund and dispute whole. The payment's next event recomputes both.
UPDATE stripe_payments
SET disputed_micros = CASE WHEN disputed = 1 THEN amount_micros ELSE 0 END,
  reversed_micros = refunded_micros + CASE WHEN disputed = 1 THEN amount_micros ELSE 0 END;
