/**
 * What the agents write in a reply's `metadata`, read defensively: it crosses the wire from the
 * server, and fields arrive over time (`finish` is newer than `priceMicros`), so a reader keeps
 * only well-typed fields and never throws.
 */

/** How a reply ended, as the server writes it (`completed` needs no mark). */
export type ReplyFinish = "completed" | "stopped" | "failed";

/** What a refusal by billing is called in metadata (the app words the call to action). */
export type StopCode = "insufficient_credits" | "spend_limit";

/** What the assistant agent writes in each reply's metadata. */
export interface AssistantMeta {
  code?: StopCode;
  finish?: ReplyFinish;
  /**
   * Any other code the server gave for a stop or failure (`access_ended`, `model_error`,
   * `model_stalled`, or an application error code a tool raised).
   */
  reason?: string;
  /** The failure's message, when the server gave one with `finish: "failed"`. */
  error?: string;
  /** Everything the reply cost: its model calls and its tool calls. */
  priceMicros?: number;
  /** What its tool calls were charged (part of `priceMicros`). */
  toolPriceMicros?: number;
  steps?: number;
  tokens?: {
    promptTokens: number;
    completionTokens: number;
    cachedPromptTokens: number;
    reasoningTokens: number;
  };
}

/** What the onboarding agent writes in each reply's metadata. */
export interface OnboardingMeta {
  freeTurnsLeft?: number;
  code?: "preview_exhausted";
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

const integer = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : undefined;

const errorText = (value: unknown): string | undefined => {
  if (typeof value === "string" && value !== "") return value;
  const message = record(value)?.message;
  return typeof message === "string" && message !== "" ? message : undefined;
};

/** Reads an assistant reply's metadata; fields of the wrong type are dropped. */
export function readAssistantMeta(metadata: unknown): AssistantMeta {
  const meta = record(metadata);
  if (!meta) return {};
  const result: AssistantMeta = {};
  if (meta.code === "insufficient_credits" || meta.code === "spend_limit") result.code = meta.code;
  else if (typeof meta.code === "string" && /^[a-z][a-z0-9_]{0,63}$/.test(meta.code)) {
    result.reason = meta.code;
  }
  if (meta.finish === "completed" || meta.finish === "stopped" || meta.finish === "failed") {
    result.finish = meta.finish;
  }
  const error = errorText(meta.error);
  if (error !== undefined) result.error = error;
  const price = integer(meta.priceMicros);
  if (price !== undefined) result.priceMicros = price;
  const toolPrice = integer(meta.toolPriceMicros);
  if (toolPrice !== undefined) result.toolPriceMicros = toolPrice;
  const steps = integer(meta.steps);
  if (steps !== undefined) result.steps = steps;
  const tokens = record(meta.tokens);
  if (tokens) {
    result.tokens = {
      promptTokens: integer(tokens.promptTokens) ?? 0,
      completionTokens: integer(tokens.completionTokens) ?? 0,
      cachedPromptTokens: integer(tokens.cachedPromptTokens) ?? 0,
      reasoningTokens: integer(tokens.reasoningTokens) ?? 0,
    };
  }
  return result;
}

/** Reads an onboarding reply's metadata (free preview turns). */
export function readOnboardingMeta(metadata: unknown): OnboardingMeta {
  const meta = record(metadata);
  if (!meta) return {};
  const freeTurnsLeft = integer(meta.freeTurnsLeft);
  return {
    ...(freeTurnsLeft === undefined ? {} : { freeTurnsLeft }),
    ...(meta.code === "preview_exhausted" ? { code: "preview_exhausted" as const } : {}),
  };
}

/** The free turns left in the preview, from the newest reply that says so. */
export function previewStatus(messages: readonly { role: string; metadata?: unknown }[]): {
  freeTurnsLeft: number | null;
  exhausted: boolean;
} {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.role !== "assistant") continue;
    const meta = readOnboardingMeta(message.metadata);
    if (meta.code === "preview_exhausted") return { freeTurnsLeft: 0, exhausted: true };
    if (meta.freeTurnsLeft !== undefined) {
      return { freeTurnsLeft: meta.freeTurnsLeft, exhausted: meta.freeTurnsLeft <= 0 };
    }
  }
  return { freeTurnsLeft: null, exhausted: false };
}

const REASONS: Record<string, string> = {
  access_ended: "Your access to this chat ended.",
  model_error: "The model returned an error.",
  model_stalled: "The model stopped responding.",
};

/** Words for a stop or failure code from the server; an unknown code is shown as it is. */
export const describeReason = (reason: string): string => REASONS[reason] ?? reason;

/** An earlier version of a regenerated reply, as the server keeps it in the new one's metadata. */
export interface ReplyVersionView {
  parts: unknown[];
  metadata: unknown;
}

/** A reply's earlier versions, oldest first; malformed entries are dropped. */
export function readVersions(metadata: unknown): ReplyVersionView[] {
  const versions = record(metadata)?.versions;
  if (!Array.isArray(versions)) return [];
  return versions.flatMap((version) => {
    const entry = record(version);
    return entry && Array.isArray(entry.parts)
      ? [{ parts: entry.parts as unknown[], metadata: entry.metadata ?? {} }]
      : [];
  });
}
