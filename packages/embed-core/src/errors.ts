import type { ErrorCode } from "@parley/shared";

/**
 * Why an embed call failed, as a value the UI can show and the host page can read from a
 * `parley-error` event. Parley's own codes (`unauthorized`, `forbidden`, `not_found`,
 * `insufficient_credits`, `spend_limit`, `rate_limited`, ...) come from the server's error body;
 * three are the client's: `network` (Parley could not be reached), `token_unavailable` (the host
 * page's token source failed: usually the visitor is not signed in there) and `invalid_response`
 * (an answer that is not the contract's shape).
 */
export interface EmbedError {
  code: ErrorCode | "network" | "token_unavailable" | "invalid_response";
  /** HTTP status of the answer that failed; 0 when there was none. */
  status: number;
  /** For people: shown in the embed as it is. */
  message: string;
  /** Any other members of the server's error body (`field`, limits, retry hints). */
  details?: Record<string, unknown>;
}

/** A call's outcome: expected failures are values, not exceptions. */
export type Result<T> = { ok: true; data: T } | { ok: false; error: EmbedError };

/**
 * An EmbedError thrown where an API wants a rejecting promise (the chat hook's ticket and
 * transcript callbacks). `error` is the same value a Result would carry.
 */
export class EmbedFailure extends Error {
  readonly error: EmbedError;

  constructor(error: EmbedError) {
    super(error.message);
    this.name = "EmbedFailure";
    this.error = error;
  }
}

/** The value of a Result, or its error thrown as an EmbedFailure. */
export function unwrap<T>(result: Result<T>): T {
  if (result.ok) return result.data;
  throw new EmbedFailure(result.error);
}

export const fail = (error: EmbedError): { ok: false; error: EmbedError } => ({
  ok: false,
  error,
});

const STATUS_CODES: Record<number, EmbedError["code"]> = {
  400: "invalid_request",
  401: "unauthorized",
  402: "insufficient_credits",
  403: "forbidden",
  404: "not_found",
  409: "conflict",
  410: "gone",
  413: "payload_too_large",
  429: "rate_limited",
};

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The EmbedError of a failed answer: the server's `{ error: { code, message, ... } }` when the
 * body is one, else a code from the status (a proxy's HTML 502 has no JSON to read).
 */
export async function readError(response: Response): Promise<EmbedError> {
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const inner = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const { code, message, ...details } = inner ?? {};
  return {
    code:
      typeof code === "string"
        ? (code as EmbedError["code"])
        : (STATUS_CODES[response.status] ?? "internal"),
    status: response.status,
    message:
      typeof message === "string" && message !== ""
        ? message
        : `The assistant could not be reached (HTTP ${response.status}).`,
    ...(Object.keys(details).length > 0 ? { details } : {}),
  };
}

export const networkError = (): EmbedError => ({
  code: "network",
  status: 0,
  message: "Cannot reach the assistant. Check your connection.",
});
