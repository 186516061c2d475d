/**
 * Stripe's error shape, `{ "error": { type, code, message, param, doc_url } }`. The real `stripe`
 * client picks its error class from the HTTP status and `type` (400/404 ->
 * StripeInvalidRequestError, or StripeIdempotencyError when `type` is `idempotency_error`;
 * 401 -> StripeAuthenticationError; 402 -> StripeCardError), so both must match what Stripe sends.
 */

export type StripeErrorType =
  | "api_error"
  | "card_error"
  | "idempotency_error"
  | "invalid_request_error";

export type StripeErrorBody = {
  error: {
    type: StripeErrorType;
    message: string;
    code?: string;
    param?: string;
    decline_code?: string;
    doc_url?: string;
    /** A card error's charge and PaymentIntent (the whole object), as Stripe sends them. */
    charge?: string;
    payment_intent?: unknown;
    payment_method?: unknown;
  };
};

/** What a card error carries besides its message: the objects the failed attempt left. */
export type StripeErrorExtra = {
  charge?: string;
  payment_intent?: unknown;
  payment_method?: unknown;
};

/** The one error of the stand-in; `server.ts` turns it into a response in exactly one place. */
export class StripeApiError extends Error {
  readonly status: number;
  readonly type: StripeErrorType;
  readonly code: string | undefined;
  readonly param: string | undefined;
  readonly declineCode: string | undefined;
  readonly extra: StripeErrorExtra;
  /**
   * The request ran and changed state before it failed (a declined off-session payment). Stripe
   * saves such a result under the request's Idempotency-Key like a success; a request refused
   * before it began (bad parameters) keeps nothing.
   */
  readonly executed: boolean;

  constructor(
    status: number,
    type: StripeErrorType,
    message: string,
    options?: {
      code?: string;
      param?: string;
      declineCode?: string;
      extra?: StripeErrorExtra;
      executed?: boolean;
      cause?: unknown;
    },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "StripeApiError";
    this.status = status;
    this.type = type;
    this.code = options?.code;
    this.param = options?.param;
    this.declineCode = options?.declineCode;
    this.extra = options?.extra ?? {};
    this.executed = options?.executed ?? false;
  }

  toBody(): StripeErrorBody {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code === undefined
          ? {}
          : { code: this.code, doc_url: `https://stripe.com/docs/error-codes/${this.code}` }),
        ...(this.param === undefined ? {} : { param: this.param }),
        ...(this.declineCode === undefined ? {} : { decline_code: this.declineCode }),
        ...this.extra,
      },
    };
  }
}

/** A 400 `invalid_request_error`, the answer to most bad input. */
export function invalidRequest(
  message: string,
  options?: { code?: string; param?: string },
): StripeApiError {
  return new StripeApiError(400, "invalid_request_error", message, options);
}

export function missingParam(param: string): StripeApiError {
  return invalidRequest(`Missing required param: ${param}.`, { code: "parameter_missing", param });
}

/**
 * Stripe answers an unknown id in the path with 404 and an unknown id inside the body (a
 * `customer` or `charge` parameter) with 400; both carry `resource_missing`.
 */
export function noSuch(
  kind: string,
  id: string,
  options: { param: string; status?: 400 | 404 },
): StripeApiError {
  return new StripeApiError(
    options.status ?? 404,
    "invalid_request_error",
    `No such ${kind}: '${id}'`,
    {
      code: "resource_missing",
      param: options.param,
    },
  );
}
