-- Billing directory data. Balances and the ledger live in each org's BillingAccount Durable Object;
-- D1 only maps Stripe objects to orgs (refund and dispute events may not name the org).
ALTER TABLE organizations ADD COLUMN stripe_customer_id TEXT;

CREATE TABLE stripe_payments (
  payment_intent_id TEXT PRIMARY KEY,
  checkout_session_id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  amount_micros INTEGER NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX stripe_payments_by_org ON stripe_payments (org_id);
