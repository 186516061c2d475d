/** What an assistant reply carries and says: its metadata and its refusals; the session's title. */
import {
  addTokens,
  noTokens,
  periodResetsAt,
  type ReserveResult,
  type SpendLimitScope,
  scopePeriod,
  type TokenUsage,
} from "@parley/billing";
import { type AssistantReplyMetadata, type ReplyVersion, titleFrom } from "@parley/shared";
import type { UIMessage } from "ai";
import { errorReply, noticeReply } from "./reply-endings.ts";
import { TurnRefusal } from "./turn-guard.ts";

/**
 * Written by the server in each assistant reply's metadata; the client never writes it. The shape
 * clients read is `AssistantReplyMetadata` in @parley/shared:
 *
 * - `turnId`: the server's id of the turn that wrote this reply (its usage rows, API and CSV, are
 *   `<turnId>:<step>`), with the reply's first chunk, and with it `profile` (`{ id, version }`,
 *   id null for Parley's built-in assistant) and `model` (`{ id, name }`) it ran with.
 * - `finish`: `completed` (the stream ran to its end, a refusal notice included), `stopped` (the
 *   member stopped it, or their access ended) or `failed` (the model errored or stalled). Absent
 *   only on replies stored before 2026-12-01.
 * - `code`: why the reply stopped short or failed: the org could not afford the (next) model call
 *   (`insufficient_credits`, `spend_limit`), the member lost access (`access_ended`), the model
 *   failed (`model_error`, `model_stalled`), or one of our own error codes a tool raised.
 * - `tokens`, `priceMicros`, `steps`: everything the reply cost, summed: every model call settled
 *   for it (the provider's cost plus markup, exactly what was settled; for a stopped or failed
 *   reply, what the provider charged for the cut calls) and, in `priceMicros`, what its tool
 *   source calls are charged, also given alone as `toolPriceMicros` (0 included). A reply a
 *   tool approval continued (the SDK goes on writing the same message) counts both turns: the
 *   continuation adds its own to the figures the reply had (`continuedFigures`). The sum equals
 *   what billing's activity lists for the reply's turns (`replyFigures`).
 * - `versions`: a regenerated reply's earlier versions, oldest first, at most
 *   `MAX_REPLY_VERSIONS`, with the first chunk.
 */
export type AssistantMetadata = AssistantReplyMetadata;

/** What a reply cost and used, as its metadata gives it (`AssistantMetadata`'s figures). */
export interface ReplyFigures {
  tokens: TokenUsage;
  /** Model calls and tool calls together. */
  priceMicros: number;
  steps: number;
  /**
   * What the reply's tool source calls are charged (part of `priceMicros`). Always written, 0
   * included: metadata merges key by key, so a value left out would keep an older one.
   */
  toolPriceMicros: number;
}

const count = (value: unknown): number =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : 0;

/**
 * The figures of the reply a tool approval's continuation goes on writing, as stored (server
 * written) before the continuation: its own are added to them. Null when the last message is not
 * an assistant reply. A reply whose price was hidden (an app that hides cost) gives 0 for it: the
 * continued reply hides it again.
 */
export function continuedFigures(reply: UIMessage | undefined): ReplyFigures | null {
  if (reply?.role !== "assistant") return null;
  const meta = (reply.metadata ?? {}) as Record<string, unknown>;
  const tokens = (meta.tokens ?? {}) as Record<string, unknown>;
  return {
    tokens: {
      promptTokens: count(tokens.promptTokens),
      completionTokens: count(tokens.completionTokens),
      cachedPromptTokens: count(tokens.cachedPromptTokens),
      reasoningTokens: count(tokens.reasoningTokens),
    },
    priceMicros: count(meta.priceMicros),
    steps: count(meta.steps),
    toolPriceMicros: count(meta.toolPriceMicros),
  };
}

/**
 * A reply's figures: its turn's settled model calls (`settled`), what its tool calls are charged
 * (`toolMicros`), and the figures it had before a tool approval continued it (`before`).
 */
export function replyFigures(
  settled: { tokens: TokenUsage; priceMicros: number; steps: number },
  toolMicros: number,
  before: ReplyFigures | null,
): ReplyFigures {
  return {
    tokens: before ? addTokens(before.tokens, settled.tokens) : { ...settled.tokens },
    priceMicros: (before?.priceMicros ?? 0) + settled.priceMicros + toolMicros,
    steps: (before?.steps ?? 0) + settled.steps,
    toolPriceMicros: (before?.toolPriceMicros ?? 0) + toolMicros,
  };
}

/** How many earlier versions of a reply a regenerated one keeps (each is a whole reply). */
export const MAX_REPLY_VERSIONS = 3;

/**
 * The versions a regeneration of `replaced` keeps: the ones it kept itself, then `replaced` as it
 * was, the newest `MAX_REPLY_VERSIONS`. Read from the stored transcript, never from the client.
 */
export function replyVersions(replaced: UIMessage | undefined): ReplyVersion[] {
  if (replaced?.role !== "assistant") return [];
  const { versions, ...metadata } = (replaced.metadata ?? {}) as {
    versions?: unknown;
  } & Record<string, unknown>;
  const earlier = Array.isArray(versions) ? (versions as ReplyVersion[]) : [];
  return [...earlier, { parts: replaced.parts, metadata }].slice(-MAX_REPLY_VERSIONS);
}

/** A fresh id for a turn's holds and usage: made here, so no client value can collide with it. */
export const newTurnId = () => `turn-${crypto.randomUUID()}`;

/**
 * The reply when billing refuses a turn's first call: no call is made. A tool approval's
 * continuation refused keeps the figures of the reply it continues (`before`): the notice is
 * written into that same message.
 */
export function refusedReply(
  result: Exclude<ReserveResult, { ok: true }>,
  ranWith: Pick<AssistantMetadata, "profile" | "model">,
  before: ReplyFigures | null = null,
): Response {
  // A conflict means a hold id was reused: a bug, never the org's balance. No call is made.
  if (result.reason === "conflict") {
    return errorReply("This reply could not be started. Please send your message again.");
  }
  const code = result.reason === "spend_limit" ? "spend_limit" : "insufficient_credits";
  const text =
    result.reason === "spend_limit"
      ? limitText(result.limit)
      : "Your organization is out of credits. An owner or admin can top up to keep going.";
  return noticeReply(text, {
    ...ranWith,
    finish: "completed",
    code,
    ...(before ?? { tokens: noTokens(), priceMicros: 0, steps: 0, toolPriceMicros: 0 }),
  } satisfies AssistantMetadata);
}

/**
 * A new message the org cannot pay for, refused before it is stored: no reply is written for it
 * (a refusal reply per attempt piled up in the transcript), and the chat names the limit that
 * stopped it, with its period and reset, from `details`. Null for a conflict of hold ids, which
 * is a bug and not the org's money: that turn goes on to its error reply.
 */
export function billingRefusal(
  result: Exclude<ReserveResult, { ok: true }>,
  now: number,
  endUser = false,
): TurnRefusal | null {
  if (result.reason === "conflict") return null;
  // An end user (a tenant's customer) is told when to come back, never about the org's money,
  // its members or its other limits: those are the tenant's business.
  if (result.reason === "spend_limit") {
    const period = scopePeriod(result.limit);
    const text =
      endUser && !result.limit.startsWith("end_user_")
        ? `This assistant has reached its ${ADJECTIVE[period]} usage limit. ${RESETS[period]}.`
        : limitText(result.limit);
    return new TurnRefusal("spend_limit", text, {
      limit: result.limit,
      period,
      resetsAt: new Date(periodResetsAt(period, now)).toISOString(),
    });
  }
  return new TurnRefusal(
    "insufficient_credits",
    endUser
      ? ASSISTANT_PAUSED
      : "Your organization is out of credits. An owner or admin can top up to keep going.",
    {},
  );
}

/** What an end user hears when the org behind the assistant cannot pay for a reply. */
const ASSISTANT_PAUSED = "This assistant cannot answer right now. Please try again later.";

const RESETS = {
  day: "It resets at midnight UTC",
  week: "It resets on Monday at 00:00 UTC",
  month: "It resets on the 1st of the month (UTC)",
} as const;
const ADJECTIVE = { day: "daily", week: "weekly", month: "monthly" } as const;

/** The stop message of a spend limit: which one, when it resets, who can raise it. */
export function limitText(limit: SpendLimitScope): string {
  const period = scopePeriod(limit);
  const resets = RESETS[period];
  const adjective = ADJECTIVE[period];
  if (limit === "org_monthly") {
    return `This reply would go over your organization's monthly spending limit. ${resets}; an owner or admin can raise it.`;
  }
  if (limit.startsWith("end_user_")) {
    return `You have reached your ${adjective} usage limit for this assistant. ${resets}.`;
  }
  if (limit.startsWith("own_")) {
    return `This reply would go over the ${adjective} spending limit you set for yourself. ${resets}; you can raise or remove it under Billing.`;
  }
  if (limit.startsWith("project_")) {
    return `This project has reached its ${adjective} spending limit. ${resets}; the organization's owners and admins can raise it.`;
  }
  return `This reply would go over your ${adjective} spending limit in this organization. ${resets}; an owner or admin can raise it.`;
}

/**
 * A reply's metadata as the session's reader may see it: an app that hides cost from its end
 * users gets no price in the messages at all (not merely an unshown one: the metadata reaches
 * the browser), though the ledger and usage keep it.
 */
export function shownMetadata<T extends AssistantMetadata>(metadata: T, showCost: boolean): T {
  if (showCost) return metadata;
  const { priceMicros: _hidden, toolPriceMicros: _tools, ...rest } = metadata;
  return rest as T;
}

/**
 * The title a session without one gets from its first message, `[[...]]` markers left out; null
 * when nothing visible is left.
 */
export function sessionTitle(messages: readonly UIMessage[]): string | null {
  const first = messages.find((message) => message.role === "user");
  const text =
    first?.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ") ?? "";
  // The same rules as a title typed at creation: no control or bidi characters, whole code points.
  return titleFrom(text.replace(/\[\[[^\]]*\]\]/g, ""), 80);
}
