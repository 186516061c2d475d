/**
 * The errors the dev model sends, shaped as OpenRouter documents them (API reference, "Errors and
 * Debugging"): `{ error: { code, message, metadata: { error_type, provider_code? } } }`, where
 * `code` is the HTTP status and `error_type` the stable typed code to switch on. A plain
 * OpenAI-compatible server (the `openai-compatible` wire) answers OpenAI's
 * `{ error: { message, type, param, code } }` instead. Pure module.
 */

/** Typed mid-stream errors a prompt can ask for with `[[error:<type>]]`. */
export const MID_STREAM_ERRORS = {
  provider_unavailable: { status: 502, providerCode: "bad_gateway" },
  provider_overloaded: { status: 503, providerCode: "overloaded_error" },
  rate_limit_exceeded: { status: 429, providerCode: "rate_limited" },
  content_policy_violation: { status: 400, providerCode: "content_filter" },
  context_length_exceeded: { status: 400, providerCode: "context_length_exceeded" },
  timeout: { status: 504, providerCode: "timeout" },
  // A 500 is masked: a generic message and no provider code, as OpenRouter sends it.
  server: { status: 500, providerCode: null },
} as const satisfies Record<string, { status: number; providerCode: string | null }>;

export type ErrorType = keyof typeof MID_STREAM_ERRORS;

export function isErrorType(value: string): value is ErrorType {
  return Object.hasOwn(MID_STREAM_ERRORS, value);
}

/** The mid-stream error message when the prompt names no type (the default `provider_unavailable`). */
export const MID_STREAM_ERROR = "Dev model error requested by the prompt or server options";

const MESSAGES: Record<ErrorType, string> = {
  provider_unavailable: MID_STREAM_ERROR,
  provider_overloaded: "Provider is temporarily overloaded (dev model)",
  rate_limit_exceeded: "Rate limit exceeded (dev model)",
  content_policy_violation: "The output was flagged by a content filter (dev model)",
  context_length_exceeded: "The prompt and reply exceed the context window (dev model)",
  timeout: "The provider did not respond in time (dev model)",
  server: "Internal Server Error",
};

/** OpenRouter's typed error code for an HTTP status, per its reference's tables. */
export function errorTypeForStatus(status: number): string {
  const byStatus: Record<number, string> = {
    400: "invalid_request",
    401: "authentication",
    402: "payment_required",
    403: "permission_denied",
    404: "not_found",
    408: "timeout",
    413: "payload_too_large",
    422: "unprocessable",
    429: "rate_limit_exceeded",
    500: "server",
    502: "provider_unavailable",
    503: "provider_overloaded",
    504: "timeout",
  };
  return byStatus[status] ?? "unmapped";
}

export type Dialect = "openrouter" | "openai";

/** The `error` object of a mid-stream error event (and of a non-streaming error body). */
export function midStreamError(type: ErrorType, dialect: Dialect): Record<string, unknown> {
  const { status, providerCode } = MID_STREAM_ERRORS[type];
  if (dialect === "openai") {
    return { message: MESSAGES[type], type: openAiType(status), param: null, code: null };
  }
  return {
    code: status,
    message: MESSAGES[type],
    metadata: {
      error_type: type,
      ...(providerCode === null ? {} : { provider_code: providerCode }),
    },
  };
}

/** Statuses that come with a `Retry-After` header (OpenRouter sends one on 429 and 503). */
export function retriable(status: number): boolean {
  return status === 429 || status === 503;
}

/** The body of an HTTP error a provider raised before streaming (`[[http-error:N]]`, rate limits). */
export function providerErrorBody(
  status: number,
  dialect: Dialect,
  retryAfterSeconds?: number,
): { error: Record<string, unknown> } {
  const message = httpErrorMessage(status);
  if (dialect === "openai") {
    return { error: { message, type: openAiType(status), param: null, code: null } };
  }
  return {
    error: {
      code: status,
      message,
      metadata: {
        error_type: errorTypeForStatus(status),
        ...(retryAfterSeconds === undefined ? {} : { retry_after_seconds: retryAfterSeconds }),
      },
    },
  };
}

function httpErrorMessage(status: number): string {
  if (status === 429) return "Rate limit exceeded (dev model)";
  if (status === 402) return "Insufficient credits (dev model)";
  return `Dev model HTTP error ${status}`;
}

function openAiType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}
