import type { ToolCallStatus } from "@parley/shared";

/**
 * Why a tool call failed, as the record, the model and the person see it. `message` is written for
 * the person (the chat shows it on the tool's card) and never holds the call's arguments, its
 * result, a token or a credential: it is also what the record keeps.
 */
export type ToolErrorCode =
  | "url_refused"
  | "redirect"
  | "timeout"
  | "too_large"
  | "unreachable"
  | "unauthorized"
  | "http_status"
  | "malformed"
  | "tool_error"
  | "unknown_tool"
  | "invalid_arguments"
  | "call_limit"
  | "not_approved"
  | "already_ran"
  | "insufficient_credits"
  | "spend_limit"
  | "source_gone"
  | "aborted";

const STATUS: Record<ToolErrorCode, ToolCallStatus> = {
  url_refused: "refused",
  redirect: "failed",
  timeout: "timeout",
  too_large: "failed",
  unreachable: "failed",
  unauthorized: "failed",
  http_status: "tool_error",
  malformed: "failed",
  tool_error: "tool_error",
  unknown_tool: "refused",
  invalid_arguments: "refused",
  call_limit: "refused",
  not_approved: "refused",
  already_ran: "refused",
  insufficient_credits: "refused",
  spend_limit: "refused",
  source_gone: "refused",
  aborted: "aborted",
};

/** Failures that say nothing about the source's health (Parley refused, or the person stopped). */
const NOT_THE_SOURCE = new Set<ToolErrorCode>([
  "url_refused",
  "unknown_tool",
  "invalid_arguments",
  "call_limit",
  "not_approved",
  "already_ran",
  "insufficient_credits",
  "spend_limit",
  "source_gone",
  "aborted",
]);

export class ToolCallError extends Error {
  readonly code: ToolErrorCode;
  constructor(code: ToolErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.name = "ToolCallError";
  }

  get status(): ToolCallStatus {
    return STATUS[this.code];
  }

  /** Whether the failure counts against the source's health. */
  get sourceFault(): boolean {
    return !NOT_THE_SOURCE.has(this.code);
  }
}

export const isToolCallError = (error: unknown): error is ToolCallError =>
  error instanceof ToolCallError;

/** Any error as a `ToolCallError` (an unexpected one is `unreachable`, its text not shown). */
export function asToolCallError(error: unknown): ToolCallError {
  if (isToolCallError(error)) return error;
  return new ToolCallError("unreachable", "The tool's server could not be reached", {
    cause: error,
  });
}
