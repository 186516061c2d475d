-- Receipts (issue 16): each paid top-up's receipt at Stripe and what became of it since.
-- receipt_url: Stripe's hosted receipt of the payment's charge, filled the first time billing lists
-- the payment (a read of Stripe, kept). refunded_micros: the running total of its refunds, from
-- the verified refund webhooks. disputed: a dispute was opened on it (1) and not reinstated.
ALTER TABLE stripe_payments ADD COLUMN receipt_url TEXT;
ALTER TABLE stripe_payments ADD COLUMN refunded_micros INTEGER NOT NULL DEFAULT 0;
ALTER TABLE stripe_payments ADD COLUMN disputed INTEGER NOT NULL DEFAULT 0;
CREATE INDEX stripe_payments_by_org_time ON stripe_payments (org_id, created_at DESC);
