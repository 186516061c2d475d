/**
 * The Stripe objects the stand-in keeps, in Stripe's JSON shape (snake_case, `object`, `livemode`,
 * `created` in unix seconds, amounts as integers in the currency's smallest unit). Fields Parley
 * never reads are left out rather than faked; see README "Not modelled".
 */
import { randomBytes } from "node:crypto";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `<prefix>_test_<24 base62 chars>`: recognisably a test-mode stand-in id. */
export function newId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_test_${out}`;
}

export type Metadata = Record<string, string>;

export type StripeList<T> = {
  object: "list";
  data: T[];
  has_more: boolean;
  url: string;
};

export type Customer = {
  id: string;
  object: "customer";
  address: null;
  balance: number;
  created: number;
  currency: null;
  default_source: null;
  delinquent: boolean;
  description: string | null;
  email: string | null;
  invoice_prefix: string;
  livemode: false;
  metadata: Metadata;
  name: string | null;
  phone: string | null;
  preferred_locales: string[];
  shipping: null;
  tax_exempt: "none";
  test_clock: null;
};

/**
 * What Stripe answers for a deleted customer, on `DELETE`, on a later `GET` and where an expanded
 * `customer` field names it. Nothing else of the customer is kept.
 */
export type DeletedCustomer = { id: string; object: "customer"; deleted: true };

export type Price = {
  id: string;
  object: "price";
  active: boolean;
  billing_scheme: "per_unit";
  created: number;
  currency: string;
  livemode: false;
  lookup_key: null;
  metadata: Metadata;
  nickname: null;
  product: string;
  recurring: null;
  tax_behavior: "unspecified";
  type: "one_time";
  unit_amount: number;
  unit_amount_decimal: string;
};

export type LineItem = {
  id: string;
  object: "item";
  amount_discount: number;
  amount_subtotal: number;
  amount_tax: number;
  amount_total: number;
  currency: string;
  description: string;
  price: Price;
  quantity: number;
};

export type CustomerDetails = {
  address: null;
  email: string | null;
  name: string | null;
  phone: null;
  tax_exempt: "none";
  tax_ids: [];
};

export type CheckoutMode = "payment" | "setup";
export type CheckoutSessionStatus = "open" | "complete" | "expired";
export type CheckoutPaymentStatus = "paid" | "unpaid" | "no_payment_required";

export type CheckoutSession = {
  id: string;
  object: "checkout.session";
  after_expiration: null;
  allow_promotion_codes: null;
  /** Null in setup mode: nothing is charged. */
  amount_subtotal: number | null;
  amount_total: number | null;
  automatic_tax: { enabled: false; liability: null; status: null };
  billing_address_collection: null;
  cancel_url: string | null;
  client_reference_id: string | null;
  client_secret: null;
  created: number;
  /** Null in setup mode when none was passed. */
  currency: string | null;
  customer: string | null;
  customer_creation: "if_required" | "always" | null;
  customer_details: CustomerDetails | null;
  customer_email: string | null;
  expires_at: number;
  invoice: null;
  livemode: false;
  locale: string | null;
  metadata: Metadata;
  mode: CheckoutMode;
  payment_intent: string | null;
  payment_link: null;
  payment_method_collection: "if_required";
  payment_method_types: string[];
  payment_status: CheckoutPaymentStatus;
  /**
   * Setup mode: the SetupIntent once the session completes. Stripe creates it with the session;
   * the stand-in creates it when the card is saved, so it is null until then.
   */
  setup_intent: string | null;
  shipping_address_collection: null;
  status: CheckoutSessionStatus;
  submit_type: string | null;
  subscription: null;
  success_url: string | null;
  total_details: { amount_discount: number; amount_shipping: number; amount_tax: number };
  ui_mode: "hosted";
  /** The pay page while the session is open; null once it is complete or expired, as on Stripe. */
  url: string | null;
};

export type PaymentIntentStatus =
  | "requires_payment_method"
  | "processing"
  | "succeeded"
  | "canceled";

export type PaymentError = {
  type: "card_error" | "invalid_request_error";
  code: string;
  decline_code?: string;
  doc_url?: string;
  message: string;
  /** Absent when no charge was attempted (authentication required off-session). */
  charge?: string;
  /** Off-session attempts: the PaymentMethod that failed, as Stripe embeds it. */
  payment_method?: PaymentMethod;
};

export type PaymentIntent = {
  id: string;
  object: "payment_intent";
  amount: number;
  amount_capturable: number;
  amount_received: number;
  application: null;
  application_fee_amount: null;
  canceled_at: number | null;
  cancellation_reason: string | null;
  capture_method: "automatic_async";
  client_secret: string;
  confirmation_method: "automatic";
  created: number;
  currency: string;
  customer: string | null;
  description: string | null;
  last_payment_error: PaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Metadata;
  next_action: null;
  payment_method: string | null;
  payment_method_types: string[];
  receipt_email: string | null;
  statement_descriptor_suffix: string | null;
  status: PaymentIntentStatus;
};

export type CardDetails = {
  brand: "visa";
  country: "US";
  exp_month: number;
  exp_year: number;
  funding: "credit";
  last4: string;
};

export type BillingDetails = {
  address: null;
  email: string | null;
  name: string | null;
  phone: null;
};

/** A card saved through a setup-mode Checkout Session. */
export type PaymentMethod = {
  id: string;
  object: "payment_method";
  billing_details: BillingDetails;
  card: CardDetails;
  created: number;
  /** The customer it is attached to; null once detached (it cannot be used again then). */
  customer: string | null;
  livemode: false;
  metadata: Metadata;
  type: "card";
};

export type SetupIntentStatus = "requires_payment_method" | "succeeded";

export type SetupIntent = {
  id: string;
  object: "setup_intent";
  application: null;
  cancellation_reason: null;
  client_secret: string;
  created: number;
  customer: string | null;
  description: string | null;
  last_setup_error: null;
  latest_attempt: null;
  livemode: false;
  metadata: Metadata;
  next_action: null;
  payment_method: string | null;
  payment_method_types: string[];
  status: SetupIntentStatus;
  usage: "off_session";
};

export type PaymentMethodDetails =
  | {
      type: "card";
      card: CardDetails;
    }
  | {
      type: "us_bank_account";
      us_bank_account: {
        account_holder_type: "individual";
        account_type: "checking";
        bank_name: string;
        last4: string;
        routing_number: string;
      };
    };

export type ChargeStatus = "succeeded" | "pending" | "failed";

export type Charge = {
  id: string;
  object: "charge";
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  balance_transaction: string | null;
  billing_details: BillingDetails;
  calculated_statement_descriptor: string;
  captured: boolean;
  created: number;
  currency: string;
  customer: string | null;
  description: string | null;
  disputed: boolean;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Metadata;
  outcome: {
    network_status: string;
    reason: string | null;
    risk_level: "normal";
    seller_message: string;
    type: string;
  } | null;
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: PaymentMethodDetails;
  receipt_email: string | null;
  receipt_number: null;
  receipt_url: string;
  refunded: boolean;
  status: ChargeStatus;
};

export type RefundReason = "duplicate" | "fraudulent" | "requested_by_customer";

export type Refund = {
  id: string;
  object: "refund";
  amount: number;
  balance_transaction: string | null;
  charge: string;
  created: number;
  currency: string;
  metadata: Metadata;
  payment_intent: string;
  reason: RefundReason | null;
  receipt_number: null;
  status: "succeeded";
};

/**
 * A dispute's statuses as the stand-in walks them (Stripe's lifecycle without inquiries and
 * appeals): `needs_response` when opened, `under_review` once evidence is submitted, then `won`
 * or `lost`.
 */
export type DisputeStatus = "needs_response" | "under_review" | "won" | "lost";
export type DisputeReason =
  | "fraudulent"
  | "duplicate"
  | "product_not_received"
  | "subscription_canceled"
  | "general";

/**
 * A movement of the account's balance, as a dispute lists them (`balance_transactions`): the
 * withdrawal when it opens (`reporting_category: "dispute"`, the amount and Stripe's $15 fee) and,
 * when it is won, the reinstatement (`"dispute_reversal"`, the amount back, the fee kept).
 */
export type BalanceTransaction = {
  id: string;
  object: "balance_transaction";
  amount: number;
  available_on: number;
  balance_type: "payments";
  created: number;
  currency: string;
  description: string;
  exchange_rate: null;
  fee: number;
  fee_details: {
    amount: number;
    application: null;
    currency: string;
    description: string;
    type: "stripe_fee";
  }[];
  net: number;
  reporting_category: "dispute" | "dispute_reversal";
  source: string;
  status: "pending" | "available";
  type: "adjustment";
};

/** The evidence fields of a dispute (all text here; Stripe also takes file ids for some). */
export const DISPUTE_EVIDENCE_FIELDS = [
  "access_activity_log",
  "billing_address",
  "cancellation_policy",
  "cancellation_policy_disclosure",
  "cancellation_rebuttal",
  "customer_communication",
  "customer_email_address",
  "customer_name",
  "customer_purchase_ip",
  "customer_signature",
  "duplicate_charge_documentation",
  "duplicate_charge_explanation",
  "duplicate_charge_id",
  "product_description",
  "receipt",
  "refund_policy",
  "refund_policy_disclosure",
  "refund_refusal_explanation",
  "service_date",
  "service_documentation",
  "shipping_address",
  "shipping_carrier",
  "shipping_date",
  "shipping_documentation",
  "shipping_tracking_number",
  "uncategorized_file",
  "uncategorized_text",
] as const;

export type DisputeEvidence = Record<(typeof DISPUTE_EVIDENCE_FIELDS)[number], string | null> & {
  enhanced_evidence: Record<string, never>;
};

export type Dispute = {
  id: string;
  object: "dispute";
  amount: number;
  balance_transactions: BalanceTransaction[];
  charge: string;
  created: number;
  currency: string;
  enhanced_eligibility_types: string[];
  evidence: DisputeEvidence;
  evidence_details: {
    due_by: number;
    enhanced_eligibility: Record<string, never>;
    has_evidence: boolean;
    past_due: boolean;
    submission_count: number;
    submission_method: "manual" | "not_submitted";
  };
  is_charge_refundable: boolean;
  livemode: false;
  metadata: Metadata;
  payment_intent: string;
  payment_method_details: {
    card: { brand: string; case_type: "chargeback"; network: string; network_reason_code: string };
    type: "card";
  };
  reason: DisputeReason;
  status: DisputeStatus;
};

export type BillingPortalSession = {
  id: string;
  object: "billing_portal.session";
  configuration: string;
  created: number;
  customer: string;
  flow: null;
  livemode: false;
  locale: string | null;
  on_behalf_of: null;
  return_url: string | null;
  url: string;
};

export type StripeObject =
  | Customer
  | DeletedCustomer
  | CheckoutSession
  | PaymentIntent
  | PaymentMethod
  | SetupIntent
  | Charge
  | Refund
  | Dispute
  | BillingPortalSession;

/** The event types the stand-in emits (README, "Events"). */
export type StripeEventType =
  | "customer.created"
  | "customer.updated"
  | "customer.deleted"
  | "checkout.session.completed"
  | "checkout.session.async_payment_succeeded"
  | "checkout.session.async_payment_failed"
  | "checkout.session.expired"
  | "payment_intent.created"
  | "payment_intent.processing"
  | "payment_intent.succeeded"
  | "payment_intent.payment_failed"
  | "charge.pending"
  | "charge.succeeded"
  | "charge.failed"
  | "charge.refunded"
  | "refund.created"
  | "charge.dispute.created"
  | "charge.dispute.funds_withdrawn"
  | "charge.dispute.updated"
  | "charge.dispute.closed"
  | "charge.dispute.funds_reinstated"
  | "payment_method.attached"
  | "payment_method.detached"
  | "setup_intent.created"
  | "setup_intent.succeeded";

export type StripeEvent = {
  id: string;
  object: "event";
  api_version: string;
  created: number;
  data: { object: StripeObject; previous_attributes?: Record<string, unknown> };
  livemode: false;
  /** Endpoints this event has not yet been delivered to with a 2xx. */
  pending_webhooks: number;
  /** The API request that caused the event; `id: null` when a customer action (paying) did. */
  request: { id: string | null; idempotency_key: string | null };
  type: StripeEventType;
};
