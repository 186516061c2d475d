/**
 * Disputes (chargebacks) and the lifecycle Stripe documents for them, driven by the test controls
 * (a cardholder and a card network do not exist here):
 *
 * - opened: `charge.dispute.created` (status `needs_response`), then
 *   `charge.dispute.funds_withdrawn`: the amount and the dispute fee leave the balance (one
 *   balance transaction, `reporting_category: "dispute"`);
 * - evidence submitted: `charge.dispute.updated` (`needs_response` -> `under_review`);
 * - closed won: `charge.dispute.closed` (`won`), then `charge.dispute.funds_reinstated`: the
 *   amount comes back (a second balance transaction, `"dispute_reversal"`; the fee is kept, as
 *   Stripe keeps it since 2025);
 * - closed lost: `charge.dispute.closed` (`lost`) only: the funds stay withdrawn.
 *
 * Every event's `data.object` is the whole dispute at that moment, as Stripe sends it (object
 * shapes after stripe-mock's fixture and stripe-node's `Dispute` and `BalanceTransaction` types).
 * Inquiries (`warning_*`), appeals and `prevented` are not modelled.
 */
import { invalidRequest, noSuch } from "./errors.ts";
import {
  type BalanceTransaction,
  type Charge,
  DISPUTE_EVIDENCE_FIELDS,
  type Dispute,
  type DisputeEvidence,
  type DisputeReason,
  type DisputeStatus,
  newId,
  type StripeEventType,
} from "./objects.ts";

/** Stripe's fee for a dispute on a US card (US$15), withdrawn with the disputed amount. */
export const DISPUTE_FEE = 1_500;

export const DISPUTE_REASONS: readonly DisputeReason[] = [
  "fraudulent",
  "duplicate",
  "product_not_received",
  "subscription_canceled",
  "general",
];

/** Visa's reason code for each reason (what `payment_method_details.card` carries). */
const NETWORK_REASON_CODES: Readonly<Record<DisputeReason, string>> = {
  fraudulent: "10.4",
  duplicate: "12.6.1",
  product_not_received: "13.1",
  subscription_canceled: "13.2",
  general: "13.7",
};

/** Evidence is due 21 days after the dispute opens (Stripe gives 7 to 21, by network). */
const EVIDENCE_WINDOW_S = 21 * 24 * 60 * 60;

/** Funds withdrawn or reinstated become available two days later, as a card payment's do. */
const AVAILABLE_AFTER_S = 2 * 24 * 60 * 60;

export type DisputeOptions = { amount?: number; reason?: DisputeReason };

/** What the desk needs of the store: charges to dispute, the clock and the event stream. */
export type DisputeHost = {
  charge(id: string): Charge | undefined;
  nowSeconds(): number;
  emit(type: StripeEventType, dispute: Dispute, previous?: Record<string, unknown>): void;
};

function noEvidence(): DisputeEvidence {
  const evidence = Object.fromEntries(DISPUTE_EVIDENCE_FIELDS.map((field) => [field, null]));
  return { ...(evidence as Omit<DisputeEvidence, "enhanced_evidence">), enhanced_evidence: {} };
}

export class DisputeDesk {
  readonly #host: DisputeHost;
  readonly #disputes = new Map<string, Dispute>();

  constructor(host: DisputeHost) {
    this.#host = host;
  }

  reset(): void {
    this.#disputes.clear();
  }

  get(id: string): Dispute | undefined {
    return this.#disputes.get(id);
  }

  list(): Dispute[] {
    return [...this.#disputes.values()];
  }

  /**
   * A cardholder disputes a charge: `charge.dispute.created`, then
   * `charge.dispute.funds_withdrawn` with the withdrawal. One dispute per charge, as on Stripe.
   */
  open(chargeId: string, options: DisputeOptions = {}): Dispute {
    const charge = this.#host.charge(chargeId);
    if (charge === undefined) throw noSuch("charge", chargeId, { param: "charge" });
    if (charge.status !== "succeeded") {
      throw invalidRequest(
        `Charge ${charge.id} has a status of ${charge.status}; it cannot be disputed.`,
      );
    }
    if (charge.disputed) throw invalidRequest(`Charge ${charge.id} is already disputed.`);
    const amount = options.amount ?? charge.amount;
    if (!Number.isSafeInteger(amount) || amount < 1 || amount > charge.amount) {
      throw invalidRequest(`A dispute amount must be an integer from 1 to ${charge.amount}.`, {
        param: "amount",
      });
    }
    const now = this.#host.nowSeconds();
    const reason = options.reason ?? "fraudulent";
    const id = newId("dp");
    const dispute: Dispute = {
      id,
      object: "dispute",
      amount,
      balance_transactions: [
        this.#movement(id, charge, -amount, DISPUTE_FEE, "dispute", "Chargeback withdrawal"),
      ],
      charge: charge.id,
      created: now,
      currency: charge.currency,
      enhanced_eligibility_types: [],
      evidence: noEvidence(),
      evidence_details: {
        due_by: now + EVIDENCE_WINDOW_S,
        enhanced_eligibility: {},
        has_evidence: false,
        past_due: false,
        submission_count: 0,
        submission_method: "not_submitted",
      },
      // The payment can no longer be refunded while the dispute stands (Stripe's charge_disputed).
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      payment_intent: charge.payment_intent,
      payment_method_details: {
        card: {
          brand: "visa",
          case_type: "chargeback",
          network: "visa",
          network_reason_code: NETWORK_REASON_CODES[reason],
        },
        type: "card",
      },
      reason,
      status: "needs_response",
    };
    charge.disputed = true;
    this.#disputes.set(id, dispute);
    this.#host.emit("charge.dispute.created", dispute);
    this.#host.emit("charge.dispute.funds_withdrawn", dispute);
    return dispute;
  }

  /** The merchant submits evidence: `under_review`, `charge.dispute.updated`. */
  respond(id: string, text: string | null): Dispute {
    const dispute = this.#open(id);
    if (dispute.status !== "needs_response") {
      throw invalidRequest(`Dispute ${id} is already under review.`);
    }
    const previous = {
      evidence: { uncategorized_text: dispute.evidence.uncategorized_text },
      evidence_details: {
        has_evidence: dispute.evidence_details.has_evidence,
        submission_count: dispute.evidence_details.submission_count,
      },
      status: dispute.status,
    };
    dispute.evidence.uncategorized_text = text ?? "Evidence submitted through the stand-in.";
    dispute.evidence_details.has_evidence = true;
    dispute.evidence_details.submission_count += 1;
    dispute.evidence_details.submission_method = "manual";
    dispute.status = "under_review";
    this.#host.emit("charge.dispute.updated", dispute, previous);
    return dispute;
  }

  /**
   * The card network decides: `charge.dispute.closed`, and for a win
   * `charge.dispute.funds_reinstated` with the reinstatement (the disputed amount, not the fee).
   */
  close(id: string, status: "won" | "lost"): Dispute {
    const dispute = this.#open(id);
    const previous: { status: DisputeStatus } = { status: dispute.status };
    dispute.status = status;
    if (status === "lost") {
      this.#host.emit("charge.dispute.closed", dispute, previous);
      return dispute;
    }
    const charge = this.#host.charge(dispute.charge);
    if (charge === undefined) throw noSuch("charge", dispute.charge, { param: "charge" });
    dispute.balance_transactions.push(
      this.#movement(id, charge, dispute.amount, 0, "dispute_reversal", "Chargeback reversal"),
    );
    this.#host.emit("charge.dispute.closed", dispute, previous);
    this.#host.emit("charge.dispute.funds_reinstated", dispute);
    return dispute;
  }

  #open(id: string): Dispute {
    const dispute = this.#disputes.get(id);
    if (dispute === undefined) throw noSuch("dispute", id, { param: "dispute" });
    if (dispute.status === "won" || dispute.status === "lost") {
      throw invalidRequest(`Dispute ${id} is already closed (${dispute.status}).`);
    }
    return dispute;
  }

  #movement(
    disputeId: string,
    charge: Charge,
    amount: number,
    fee: number,
    category: BalanceTransaction["reporting_category"],
    what: string,
  ): BalanceTransaction {
    const now = this.#host.nowSeconds();
    return {
      id: newId("txn"),
      object: "balance_transaction",
      amount,
      available_on: now + AVAILABLE_AFTER_S,
      balance_type: "payments",
      created: now,
      currency: charge.currency,
      description: `${what} for ${charge.id}`,
      exchange_rate: null,
      fee,
      fee_details:
        fee === 0
          ? []
          : [
              {
                amount: fee,
                application: null,
                currency: charge.currency,
                description: "Dispute fee",
                type: "stripe_fee",
              },
            ],
      net: amount - fee,
      reporting_category: category,
      source: disputeId,
      status: "pending",
      type: "adjustment",
    };
  }
}

/**
 * The dispute test controls (`/__standin/...`, JSON bodies), or undefined when `path` is none of
 * them. Throws StripeApiError for bad input, before any state changes.
 */
export function disputeControl(
  desk: DisputeDesk,
  method: string,
  path: string,
  body: Record<string, unknown>,
): Dispute | undefined {
  if (method !== "POST") return undefined;
  const opened = /^\/__standin\/charges\/([^/]+)\/dispute$/.exec(path);
  if (opened !== null) {
    const { amount, reason } = body;
    if (amount !== undefined && typeof amount !== "number") {
      throw invalidRequest("amount must be an integer.", { param: "amount" });
    }
    if (reason !== undefined && !DISPUTE_REASONS.includes(reason as DisputeReason)) {
      throw invalidRequest("Unknown dispute reason.", { param: "reason" });
    }
    return desk.open(segment(opened[1]), {
      ...(amount === undefined ? {} : { amount }),
      ...(reason === undefined ? {} : { reason: reason as DisputeReason }),
    });
  }
  const responded = /^\/__standin\/disputes\/([^/]+)\/respond$/.exec(path);
  if (responded !== null) {
    const { evidence } = body;
    if (evidence !== undefined && typeof evidence !== "string") {
      throw invalidRequest("evidence must be a string.", { param: "evidence" });
    }
    return desk.respond(segment(responded[1]), evidence ?? null);
  }
  const closed = /^\/__standin\/disputes\/([^/]+)\/close$/.exec(path);
  if (closed !== null) {
    const { status } = body;
    if (status !== "won" && status !== "lost") {
      throw invalidRequest('status must be "won" or "lost".', { param: "status" });
    }
    return desk.close(segment(closed[1]), status);
  }
  return undefined;
}

function segment(value: string | undefined): string {
  try {
    return decodeURIComponent(value ?? "");
  } catch {
    return "";
  }
}
