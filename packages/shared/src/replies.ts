/**
 * What the chat agents write in a reply's `metadata` (server-written: a client never sets it), as
 * the web app, the embed and outside clients read it. docs/2026-12-01-contract.md, "Chat agents".
 */
import type { Citation } from "./knowledge.ts";

/** How a reply ended (absent on replies stored before 2026-12-01: read it as completed). */
export type ReplyFinish = "completed" | "stopped" | "failed";

/**
 * The assistant profile version a reply ran with (2026-12-06, issue 29). `id` null: Parley's
 * built-in assistant or preview (no profile chosen), version 0.
 */
export interface ReplyProfile {
  id: string | null;
  version: number;
  /** A tenant profile's name at that version (absent for the built-in one). */
  name?: string;
}

/** The catalogue model a reply ran with: its id and its display name when the reply was written. */
export interface ReplyModel {
  id: string;
  name: string;
}

/** A reply's tokens, summed over its settled model calls. */
export interface ReplyTokens {
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  reasoningTokens: number;
}

/** What both agents write on a reply. */
export interface ReplyMetadata {
  /** The server's id of the turn: its usage rows are `<turnId>:<n>`. With the first chunk. */
  turnId?: string;
  /** With the first chunk of a reply that ran (or was refused by billing after being resolved). */
  profile?: ReplyProfile;
  model?: ReplyModel;
  finish?: ReplyFinish;
  /** Why a reply stopped short or failed (`insufficient_credits`, `model_error`, ...). */
  code?: string;
}

/** An assistant session's reply: also what it cost, as settled. */
export interface AssistantReplyMetadata extends ReplyMetadata {
  tokens?: ReplyTokens;
  /**
   * What this reply cost the org: exactly what was settled for its model calls plus what its
   * tool source calls are charged, a tool approval's continuation included (absent when the end
   * user's app hides cost).
   */
  priceMicros?: number;
  /**
   * What this reply's tool source calls are charged, part of `priceMicros` (absent on replies
   * stored before 2026-12-06, or when the end user's app hides cost).
   */
  toolPriceMicros?: number;
  /** How many model calls were settled for this reply (a continuation's included). */
  steps?: number;
  /**
   * A regenerated reply's earlier versions, oldest first (at most three), so the person can
   * switch back to one. With the first chunk (2026-12-06).
   */
  versions?: ReplyVersion[];
  /**
   * The passages of the project's documents the reply was given (retrieval before its first
   * call, and every `search_knowledge` result), once each in the order found: document, version,
   * heading and the quoted passage (2026-12-06, issue 31). With the reply's end; absent when it
   * was given none. `GET /api/documents/:documentId/content?chunkId=` opens one for a member,
   * `GET /api/embed/documents/:documentId/passages/:chunkId` for an end user.
   */
  citations?: Citation[];
}

/** An earlier version of a regenerated reply, kept in the new reply's metadata (server-written). */
export interface ReplyVersion {
  /** The reply's parts as the AI SDK's `UIMessage["parts"]` stored them. */
  parts: unknown[];
  metadata: Record<string, unknown>;
}

/** A reply of the free onboarding preview: never a cost. */
export interface OnboardingReplyMetadata extends ReplyMetadata {
  freeTurnsLeft?: number;
}
