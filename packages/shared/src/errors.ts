/**
 * The error codes of Parley's public contract (SPEC, "The public contract") and the HTTP status each
 * one is answered with. Clients switch on `code`; the status only mirrors it.
 */
export const errorStatus = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  spend_limit: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
  payload_too_large: 413,
  rate_limited: 429,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;
export type ErrorStatus = (typeof errorStatus)[ErrorCode];

/** One problem of a refused input: the field it is about (dotted path) and why. */
export interface FieldIssue {
  field: string;
  message: string;
}

/**
 * The JSON body of every error response. `field` names the offending input when there is one;
 * `issues`, when the input had several problems, names each (the first is `field` and `message`),
 * so a form shows them all at once instead of one per attempt.
 */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; field?: string; issues?: FieldIssue[] };
}

/**
 * The one application error. Domain code throws it; each surface (HTTP, WebSocket) turns it into a
 * response in exactly one place. `message` is shown to the user; `cause` goes to the log only.
 */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly field: string | undefined;
  readonly issues: FieldIssue[] | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; field?: string | undefined; issues?: FieldIssue[] },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = "AppError";
    this.code = code;
    this.field = options?.field;
    this.issues = options?.issues;
  }

  get status(): ErrorStatus {
    return errorStatus[this.code];
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.field === undefined ? {} : { field: this.field }),
        ...(this.issues === undefined ? {} : { issues: this.issues }),
      },
    };
  }
}

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;
