-- Automatic top-ups (issue 16.1, 2026-12-03) are paid off-session, with no Checkout Session: a
-- payment names its session only when it has one, and says where it came from. SQLite cannot drop
-- a NOT NULL in place, so the table is rebuilt with its rows and indexes (nothing references it).
CREATE TABLE stripe_payments_next (
  payment_intent_id TEXT PRIMARY KEY,
  checkout_session_id TEXT UNIQUE,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  amount_micros INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  receipt_url TEXT,
  refunded_micros INTEGER NOT NULL DEFAULT 0,
  disputed INTEGER NOT NULL DEFAULT 0,
  source TEXT NOT NULL DEFAULT 'checkout' CHECK (source IN ('checkout', 'auto_top_up')),
  CHECK ((source = 'checkout') = (checkout_session_id IS NOT NULL))
);
INSERT INTO stripe_payments_next
  (payment_intent_id, checkout_session_id, org_id, amount_micros, created_at, receipt_url,
   refunded_micros, disputed)
SELECT payment_intent_id, checkout_session_id, org_id, amount_micros, created_at, receipt_url,
  refunded_micros, disputed
FROM stripe_payments;
DROP TABLE stripe_payments;
ALTER TABLE stripe_payments_next RENAME TO stripe_payments;
CREATE INDEX stripe_payments_by_org ON stripe_payments (org_id);
CREATE INDEX stripe_payments_by_org_time ON stripe_payments (org_id, created_at DESC);
