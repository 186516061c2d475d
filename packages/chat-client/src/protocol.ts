/**
 * The agents SDK chat wire protocol (agents 0.32.0 / @cloudflare/ai-chat 0.12.2), as JSON text
 * frames over one WebSocket per agent instance. Pure module: frame types, builders and parsing.
 * The README's "Protocol notes" describe who sends what and when.
 */
import type { UIMessage, UIMessageChunk } from "ai";

/** Wire `type` strings. The SDK spells them as a TS enum; this is the erasable equivalent. */
export const FrameType = {
  // chat (agents/chat CHAT_MESSAGE_TYPES)
  chatMessages: "cf_agent_chat_messages",
  useChatRequest: "cf_agent_use_chat_request",
  useChatResponse: "cf_agent_use_chat_response",
  chatClear: "cf_agent_chat_clear",
  chatRequestCancel: "cf_agent_chat_request_cancel",
  streamResuming: "cf_agent_stream_resuming",
  streamResumeAck: "cf_agent_stream_resume_ack",
  streamResumeRequest: "cf_agent_stream_resume_request",
  streamResumeNone: "cf_agent_stream_resume_none",
  streamPending: "cf_agent_stream_pending",
  toolResult: "cf_agent_tool_result",
  toolApproval: "cf_agent_tool_approval",
  messageUpdated: "cf_agent_message_updated",
  chatRecovering: "cf_agent_chat_recovering",
  // agent base class (agents MessageType)
  identity: "cf_agent_identity",
  state: "cf_agent_state",
  stateError: "cf_agent_state_error",
  mcpServers: "cf_agent_mcp_servers",
} as const;

/** How a request ended, from its terminal frame (`outcome`), plus the client-side `interrupted`. */
export type TurnOutcome =
  | "completed"
  | "error"
  | "aborted"
  | "skipped"
  | "recovering"
  /** The client gave up: the socket closed for good before a terminal frame arrived. */
  | "interrupted";

/** `cf_agent_use_chat_response`: one UI-message-stream chunk (JSON in `body`) of request `id`. */
export interface ChatResponseFrame {
  type: typeof FrameType.useChatResponse;
  id: string;
  /** A JSON `UIMessageChunk`, `""` on control frames, or the error text when `error` is set. */
  body: string;
  /** The request is over; no more frames follow for `id` (outside a later replay). */
  done: boolean;
  error?: boolean;
  continuation?: boolean;
  /** Re-sent from the server's stored stream during a resume. */
  replay?: boolean;
  /** The replay caught up with the live stream; live frames follow. */
  replayComplete?: boolean;
  /** Index of the chunk in its stream; a replayed chunk carries the index it had live. */
  seq?: number;
  /** On terminal frames: ids of the trailing user messages the request carried. */
  messageIds?: string[];
  outcome?: Exclude<TurnOutcome, "interrupted">;
}

export interface ChatMessagesFrame {
  type: typeof FrameType.chatMessages;
  messages: UIMessage[];
  connect?: boolean;
}

export interface StreamResumingFrame {
  type: typeof FrameType.streamResuming;
  id: string;
  /** Set when this answers a `cf_agent_stream_resume_request`; absent on the on-connect notice. */
  probeId?: string;
}

export interface StreamResumeNoneFrame {
  type: typeof FrameType.streamResumeNone;
  reason?: "idle" | "continuation-owned";
  probeId?: string;
}

export interface StreamPendingFrame {
  type: typeof FrameType.streamPending;
  id?: string;
  probeId?: string;
}

export interface IdentityFrame {
  type: typeof FrameType.identity;
  name: string;
  agent: string;
  stateFollows?: boolean;
}

export interface MessageUpdatedFrame {
  type: typeof FrameType.messageUpdated;
  message: UIMessage;
}

export interface ChatClearFrame {
  type: typeof FrameType.chatClear;
}

/** Any frame the client does not model further (state, MCP servers, recovery hints, app frames). */
export interface OtherFrame {
  type: string;
  [key: string]: unknown;
}

export type ServerFrame =
  | ChatResponseFrame
  | ChatMessagesFrame
  | StreamResumingFrame
  | StreamResumeNoneFrame
  | StreamPendingFrame
  | IdentityFrame
  | MessageUpdatedFrame
  | ChatClearFrame;

/** A parsed frame: one of the modelled ones, or `other` with its raw object. */
export type ParsedFrame = { known: ServerFrame } | { other: OtherFrame } | { invalid: string };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const isString = (value: unknown): value is string => typeof value === "string";

/**
 * Parses one text frame. Modelled frames are shape-checked on the fields the client relies on;
 * a frame that names a modelled type but lacks them is `invalid` (with the reason), never thrown.
 */
export function parseServerFrame(raw: string): ParsedFrame {
  let data: unknown;
  try {
    data = JSON.parse(raw);
  } catch {
    return { invalid: "not JSON" };
  }
  if (!isObject(data) || !isString(data.type)) return { invalid: "no type" };
  switch (data.type) {
    case FrameType.useChatResponse:
      if (!isString(data.id)) return { invalid: "chat response without id" };
      return {
        known: {
          ...data,
          type: FrameType.useChatResponse,
          id: data.id,
          body: isString(data.body) ? data.body : "",
          done: data.done === true,
        } as ChatResponseFrame,
      };
    case FrameType.chatMessages:
      if (!Array.isArray(data.messages)) return { invalid: "chat messages without messages" };
      return { known: data as unknown as ChatMessagesFrame };
    case FrameType.streamResuming:
      if (!isString(data.id)) return { invalid: "stream resuming without id" };
      return { known: data as unknown as StreamResumingFrame };
    case FrameType.streamResumeNone:
      return { known: data as unknown as StreamResumeNoneFrame };
    case FrameType.streamPending:
      return { known: data as unknown as StreamPendingFrame };
    case FrameType.identity:
      if (!isString(data.name) || !isString(data.agent))
        return { invalid: "identity without name" };
      return { known: data as unknown as IdentityFrame };
    case FrameType.messageUpdated:
      if (!isObject(data.message)) return { invalid: "message updated without message" };
      return { known: data as unknown as MessageUpdatedFrame };
    case FrameType.chatClear:
      return { known: { type: FrameType.chatClear } };
    default:
      return { other: data as OtherFrame };
  }
}

/** Parses a response frame's `body` as a UI-message-stream chunk; `undefined` for control frames. */
export function chunkOf(frame: ChatResponseFrame): UIMessageChunk | undefined {
  if (frame.error || frame.body.trim() === "") return undefined;
  try {
    const chunk: unknown = JSON.parse(frame.body);
    return isObject(chunk) && isString(chunk.type) ? (chunk as UIMessageChunk) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `cf_agent_use_chat_request`: the body is a JSON string, as the SDK's transport builds it:
 * `{ messages, trigger, ...body }` (so `body` fields override the first two, as in the SDK).
 */
export function chatRequestFrame(
  id: string,
  messages: readonly UIMessage[],
  body: Record<string, unknown> = {},
  trigger: "submit-message" | "regenerate-message" = "submit-message",
): string {
  return JSON.stringify({
    id,
    init: { method: "POST", body: JSON.stringify({ messages, trigger, ...body }) },
    type: FrameType.useChatRequest,
  });
}

export const cancelFrame = (id: string): string =>
  JSON.stringify({ id, type: FrameType.chatRequestCancel });

export const clearFrame = (): string => JSON.stringify({ type: FrameType.chatClear });

export const resumeRequestFrame = (probeId: string): string =>
  JSON.stringify({ type: FrameType.streamResumeRequest, probeId });

export const resumeAckFrame = (id: string): string =>
  JSON.stringify({ type: FrameType.streamResumeAck, id });

/**
 * The agent's WebSocket URL for an agent URL given as http(s) or ws(s), with a single-use connect
 * ticket as `?ticket=` when given. A bearer token never goes in a URL (URLs land in traces and
 * logs): it travels in the `Authorization` header.
 */
export function webSocketUrl(agentUrl: string, ticket?: string): string {
  const url = new URL(agentUrl);
  if (url.protocol === "http:") url.protocol = "ws:";
  else if (url.protocol === "https:") url.protocol = "wss:";
  if (ticket !== undefined) url.searchParams.set("ticket", ticket);
  return url.toString();
}

/** `<agent-url>/get-messages` over http(s), keeping the agent URL's query. */
export function getMessagesUrl(agentUrl: string): string {
  const url = new URL(agentUrl);
  if (url.protocol === "ws:") url.protocol = "http:";
  else if (url.protocol === "wss:") url.protocol = "https:";
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/get-messages`;
  return url.toString();
}
