import { jsonTextTooDeep } from "@parley/shared";
import type { UIMessage } from "ai";

/**
 * What a client may send to a chat agent, decided before the SDK sees the frame. The server's
 * transcript is the only truth: a chat request is rebuilt from the stored transcript plus the one new
 * user message it carries, its custom `body` is dropped (identity and credit data never come from the
 * client), and snapshot frames that would overwrite history are refused.
 */

export const FrameType = {
  chatRequest: "cf_agent_use_chat_request",
  chatMessages: "cf_agent_chat_messages",
  chatClear: "cf_agent_chat_clear",
  cancel: "cf_agent_chat_request_cancel",
  resumeRequest: "cf_agent_stream_resume_request",
  resumeAck: "cf_agent_stream_resume_ack",
  toolResult: "cf_agent_tool_result",
  toolApproval: "cf_agent_tool_approval",
} as const;

export interface FramePolicy {
  /**
   * The verified sender, written by the server into a new user message's metadata (`authorId`),
   * so that erasing a member can find the messages they wrote in a shared chat.
   */
  authorId?: string;
  /** Largest frame accepted at all, in bytes. */
  maxFrameBytes: number;
  /** Largest user message text, in bytes of UTF-8: well under the SDK's 2 MB row limit. */
  maxUserMessageBytes: number;
  /** Whether tool approvals are accepted (the assistant's memory tool asks for them). */
  toolApprovals: boolean;
  /**
   * Whether the chat has connections other than the sender. The SDK shows them a request's messages
   * as the whole transcript, so then a new message goes with the stored transcript; alone, it goes
   * by itself and the SDK appends it, so a turn's work does not grow with the history.
   */
  othersConnected: boolean;
}

export type FrameRefusal = {
  kind: "refuse";
  code: "invalid_request" | "payload_too_large" | "forbidden";
  message: string;
  /** The chat request id, when the frame was a chat request: the client's turn ends with the error. */
  requestId?: string;
};

export type FrameDecision =
  | {
      kind: "forward";
      frame: string;
      /** Set for chat requests: the turn starts under this id. */
      requestId?: string;
      newUserMessage?: UIMessage;
      trigger?: "submit-message" | "regenerate-message";
      /** Set for tool approvals: the SDK continues the turn under an id of its own. */
      approval?: { toolCallId: string; approved: boolean };
    }
  | FrameRefusal;

/**
 * Deepest nesting of arrays and objects in a frame, and in a chat request's body. The SDK parses
 * what is forwarded and walks it recursively, so a frame nested thousands of levels deep must stop
 * here. Twice the HTTP bodies' limit: a client re-sends the history, whose tool parts carry project
 * memory (itself up to 32 levels) a few levels down.
 */
export const MAX_FRAME_JSON_DEPTH = 64;

const refuse = (code: FrameRefusal["code"], message: string, requestId?: string): FrameRefusal => ({
  kind: "refuse",
  code,
  message,
  ...(requestId === undefined ? {} : { requestId }),
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const byteLength = (text: string) => new TextEncoder().encode(text).byteLength;

/** The text of a client's user message, if it is one: only text parts are accepted. */
function userText(message: unknown): string | null {
  if (!isRecord(message) || message.role !== "user" || !Array.isArray(message.parts)) return null;
  const texts: string[] = [];
  for (const part of message.parts) {
    if (!isRecord(part) || part.type !== "text" || typeof part.text !== "string") return null;
    texts.push(part.text);
  }
  const text = texts.join("\n");
  return text.trim() === "" ? null : text;
}

export function decideFrame(
  raw: string | ArrayBuffer | ArrayBufferView,
  transcript: readonly UIMessage[],
  policy: FramePolicy,
): FrameDecision {
  if (typeof raw !== "string") return refuse("invalid_request", "Binary frames are not accepted");
  if (byteLength(raw) > policy.maxFrameBytes) {
    return refuse("payload_too_large", `Frames must be at most ${policy.maxFrameBytes} bytes`);
  }
  if (jsonTextTooDeep(raw, MAX_FRAME_JSON_DEPTH)) {
    return refuse("invalid_request", `Frames must nest at most ${MAX_FRAME_JSON_DEPTH} levels`);
  }
  let frame: unknown;
  try {
    frame = JSON.parse(raw);
  } catch {
    return refuse("invalid_request", "Frames must be JSON");
  }
  if (!isRecord(frame) || typeof frame.type !== "string") {
    return refuse("invalid_request", "Frames must be objects with a type");
  }

  switch (frame.type) {
    case FrameType.chatRequest:
      return chatRequest(frame, transcript, policy);
    case FrameType.chatClear:
    case FrameType.cancel:
    case FrameType.resumeRequest:
    case FrameType.resumeAck:
      return { kind: "forward", frame: raw };
    case FrameType.toolApproval: {
      if (!policy.toolApprovals) return refuse("forbidden", "This chat has no tools to approve");
      if (typeof frame.toolCallId !== "string" || typeof frame.approved !== "boolean") {
        return refuse("invalid_request", "A tool approval needs a toolCallId and approved");
      }
      return {
        kind: "forward",
        frame: raw,
        approval: { toolCallId: frame.toolCallId, approved: frame.approved },
      };
    }
    case FrameType.chatMessages:
      return refuse("forbidden", "The transcript is kept by the server and cannot be replaced");
    case FrameType.toolResult:
      return refuse("forbidden", "This chat has no client-side tools");
    default:
      return refuse(
        "invalid_request",
        `Unknown frame type ${JSON.stringify(frame.type).slice(0, 60)}`,
      );
  }
}

function chatRequest(
  frame: Record<string, unknown>,
  transcript: readonly UIMessage[],
  policy: FramePolicy,
): FrameDecision {
  const id =
    typeof frame.id === "string" && frame.id.length > 0 && frame.id.length <= 128 ? frame.id : null;
  if (!id) return refuse("invalid_request", "A chat request needs an id");
  const init = frame.init;
  if (!isRecord(init) || init.method !== "POST" || typeof init.body !== "string") {
    return refuse("invalid_request", "A chat request needs a POST body", id);
  }
  if (jsonTextTooDeep(init.body, MAX_FRAME_JSON_DEPTH)) {
    return refuse(
      "invalid_request",
      `The chat request body must nest at most ${MAX_FRAME_JSON_DEPTH} levels`,
      id,
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(init.body);
  } catch {
    return refuse("invalid_request", "The chat request body must be JSON", id);
  }
  if (!isRecord(body) || !Array.isArray(body.messages)) {
    return refuse("invalid_request", "The chat request body needs messages", id);
  }

  const rebuilt = (
    messages: readonly UIMessage[],
    trigger: "submit-message" | "regenerate-message",
  ) =>
    JSON.stringify({
      type: FrameType.chatRequest,
      id,
      // Everything but the messages and the trigger is dropped: no custom body reaches the agent.
      init: { method: "POST", body: JSON.stringify({ messages, trigger }) },
    });

  if (body.trigger === "regenerate-message") {
    // Regenerate answers the last user message again: the stored transcript minus its last reply.
    const last = transcript.at(-1);
    if (last?.role !== "assistant") {
      return refuse("invalid_request", "There is no reply to regenerate", id);
    }
    return {
      kind: "forward",
      frame: rebuilt(transcript.slice(0, -1), "regenerate-message"),
      requestId: id,
      trigger: "regenerate-message",
    };
  }

  const candidate = body.messages.at(-1);
  const text = userText(candidate);
  if (text === null) {
    return refuse(
      "invalid_request",
      "The last message must be a user message made of text parts",
      id,
    );
  }
  if (byteLength(text) > policy.maxUserMessageBytes) {
    return refuse(
      "payload_too_large",
      `A message must be at most ${policy.maxUserMessageBytes} bytes`,
      id,
    );
  }
  const messageId =
    isRecord(candidate) && typeof candidate.id === "string" && candidate.id.length <= 128
      ? candidate.id
      : null;
  if (!messageId || transcript.some((message) => message.id === messageId)) {
    // A known id would let the client edit a stored message in place.
    return refuse("invalid_request", "A new message needs a new id", id);
  }
  const newUserMessage: UIMessage = {
    id: messageId,
    role: "user",
    parts: [{ type: "text", text }],
    ...(policy.authorId === undefined ? {} : { metadata: { authorId: policy.authorId } }),
  };
  return {
    kind: "forward",
    frame: rebuilt(
      policy.othersConnected ? [...transcript, newUserMessage] : [newUserMessage],
      "submit-message",
    ),
    requestId: id,
    newUserMessage,
    trigger: "submit-message",
  };
}
