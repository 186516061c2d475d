import type { ReactNode } from "react";
import { formatMicros } from "../../lib/money.ts";

/** What the onboarding agent writes in each reply's metadata (server-written, read defensively). */
export interface OnboardingMeta {
  freeTurnsLeft?: number;
  code?: "preview_exhausted";
}

/** What the assistant agent writes in each reply's metadata. */
export interface AssistantMeta {
  code?: "insufficient_credits" | "spend_limit";
  priceMicros?: number;
  steps?: number;
  tokens?: {
    promptTokens: number;
    completionTokens: number;
    cachedPromptTokens: number;
    reasoningTokens: number;
  };
}

const record = (value: unknown): Record<string, unknown> | null =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;

const integer = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) ? value : undefined;

export function readOnboardingMeta(metadata: unknown): OnboardingMeta {
  const meta = record(metadata);
  if (!meta) return {};
  const freeTurnsLeft = integer(meta.freeTurnsLeft);
  return {
    ...(freeTurnsLeft === undefined ? {} : { freeTurnsLeft }),
    ...(meta.code === "preview_exhausted" ? { code: "preview_exhausted" as const } : {}),
  };
}

export function readAssistantMeta(metadata: unknown): AssistantMeta {
  const meta = record(metadata);
  if (!meta) return {};
  const result: AssistantMeta = {};
  if (meta.code === "insufficient_credits" || meta.code === "spend_limit") result.code = meta.code;
  const price = integer(meta.priceMicros);
  if (price !== undefined) result.priceMicros = price;
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

/** Under an assistant reply: its price and tokens, or why it stopped and what to do about it. */
export function AssistantReplyMeta({
  metadata,
  topUp,
}: {
  metadata: unknown;
  /** The call to action when credits ran out (a link to billing). */
  topUp: ReactNode;
}) {
  const meta = readAssistantMeta(metadata);
  if (meta.code) {
    return (
      <div className="notice" role="status">
        <p>
          {meta.code === "spend_limit"
            ? "A spend limit stopped this reply."
            : "Your organization is out of credits."}
        </p>
        {topUp}
      </div>
    );
  }
  if (meta.priceMicros === undefined) return null;
  const tokens = meta.tokens ? meta.tokens.promptTokens + meta.tokens.completionTokens : null;
  return (
    <p className="meta">
      <span>Cost {formatMicros(meta.priceMicros)}</span>
      {tokens === null ? null : <span> · {tokens.toLocaleString("en-US")} tokens</span>}
      {meta.steps && meta.steps > 1 ? <span> · {meta.steps} steps</span> : null}
    </p>
  );
}
