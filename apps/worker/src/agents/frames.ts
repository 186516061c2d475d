import { jsonTextTooDeep, modelIdSchema, type Role } from "@parley/shared";
import type { UIMessage } from "ai";

/**
 * What a client may send to a chat agent, decided before the SDK sees the frame. The server's
 * transcript is the only truth: a chat request is rebuilt from the stored transcript plus the one new
 * user message it carries, its custom `body` is dropped (identity and credit data never come from the
 * client) but for `model`, a model the member names for this turn (checked here for its form and by
 * the agent against the org's allowed models), and snapshot frames that would overwrite history are
 * refused.
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
  /**
   * The sender's role in the object's org, as the connection holds it. A role may have changed since
   * the socket opened, but a role change closes the member's sockets (their token version is bumped
   * and `revokeConnections` re-checks them: docs/2026-12-01-hardening.md), so a connection's role is
   * current enough for what a frame may do.
   */
  role?: Role;
  /**
   * Whether the chat is shared by everyone in the org (the onboarding preview), rather than owned by
   * one member (an assistant session). In a shared chat only an owner or admin may clear it, and a
   * member may regenerate only the reply to a message they wrote.
   */
  sharedChat: boolean;
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
  code: "invalid_request" | "payload_too_large" | "forbidden" | "conflict";
  message: string;
  /** The input it is about (`model`: the chat body's model). */
  field?: string;
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
      /**
       * The model a chat request's body names for this turn (a well-formed id: whether the caller
       * may use it is the agent's to decide, at admission, before anything is stored).
       */
      model?: string;
      /** Set for tool approvals: the SDK continues the turn under an id of its own. */
      approval?: { toolCallId: string; approved: boolean };
      /** Set for cancels: the chat request the client asks to stop. */
      cancel?: { requestId: string };
    }
  | FrameRefusal;

/**
 * Deepest nesting of arrays and objects in a frame, and in a chat request's body. The SDK parses
 * what is forwarded and walks it recursively, so a frame nested thousands of levels deep must stop
 * here. Twice the HTTP bodies' limit: a client re-sends the history, whose tool parts carry project
 * memory (itself up to 32 levels) a few levels down.
 */
export const MAX_FRAME_JSON_DEPTH = 64;

/**
 * The largest WebSocket message the platform delivers at all (workerd caps a message at 1 MiB). A
 * frame over our own limit but within this one is still parsed, once, to find a chat request's id,
 * so that its refusal ends the client's turn (error and done frames under that id).
 */
export const PLATFORM_MAX_FRAME_BYTES = 1024 * 1024;

/** Longest chat request id accepted, and longest echoed in a refusal (an id too long to accept). */
const MAX_REQUEST_ID_CHARS = 128;
const MAX_ECHOED_ID_CHARS = 1024;

/** The tool part state of a call waiting for the member's approval (AI SDK `UIToolInvocation`). */
const APPROVAL_REQUESTED = "approval-requested";

const refuse = (code: FrameRefusal["code"], message: string, requestId?: string): FrameRefusal => ({
  kind: "refuse",
  code,
  message,
  ...(requestId === undefined ? {} : { requestId }),
});

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const byteLength = (text: string) => new TextEncoder().encode(text).byteLength;

// Chat text follows the rules of typed text (`textProblem` in @parley/shared, multiline), with two
// differences that make that function not fit: bidi controls stay allowed (people write right-to-left
// text, and a chat message is shown as a paragraph of its own, never spliced into a name), and so do
// U+2028/U+2029 (text pasted from word processors carries them). Refused: an unpaired surrogate,
// NUL and the other control characters but tab, line feed and carriage return, and text with
// nothing visible (whitespace, format characters such as zero-width spaces and joiners, other
// default-ignorable code points such as variation selectors, blank fillers).
const LONE_SURROGATE = /\p{Cs}/u;
const CONTROL = /(?![\t\n\r])\p{Cc}/u;
const INVISIBLE_ONLY = /^[\s\p{Cf}\p{Default_Ignorable_Code_Point}\u2800]*$/u;

/** Why `text` cannot be a chat message, or null. */
export function chatTextProblem(text: string): string | null {
  if (LONE_SURROGATE.test(text)) {
    return "A message must be valid Unicode text (it has an unpaired surrogate)";
  }
  if (CONTROL.test(text)) return "A message must not contain control characters";
  if (INVISIBLE_ONLY.test(text)) return "A message must contain visible characters";
  return null;
}

/** The text of a client's user message, or why it is not one: only text parts are accepted. */
function userText(message: unknown): { text: string } | { problem: string } {
  const shape = { problem: "The last message must be a user message made of text parts" };
  if (!isRecord(message) || message.role !== "user" || !Array.isArray(message.parts)) return shape;
  const texts: string[] = [];
  for (const part of message.parts) {
    if (!isRecord(part) || part.type !== "text" || typeof part.text !== "string") return shape;
    texts.push(part.text);
  }
  const text = texts.join("\n");
  const problem = chatTextProblem(text);
  return problem === null ? { text } : { problem };
}

/** Whether `toolCallId` names a tool part of the transcript still waiting for approval. */
function awaitsApproval(transcript: readonly UIMessage[], toolCallId: string): boolean {
  for (let i = transcript.length - 1; i >= 0; i--) {
    for (const part of (transcript[i] as UIMessage).parts) {
      if (
        "toolCallId" in part &&
        part.toolCallId === toolCallId &&
        "state" in part &&
        (part.state as string) === APPROVAL_REQUESTED
      ) {
        return true;
      }
    }
  }
  return false;
}

/**
 * The id of an oversized frame when it is a chat request whose id can be read: within what the
 * platform delivers and the nesting limit, parsed once. Undefined otherwise.
 */
function oversizedRequestId(raw: string, bytes: number): string | undefined {
  if (bytes > PLATFORM_MAX_FRAME_BYTES || jsonTextTooDeep(raw, MAX_FRAME_JSON_DEPTH)) return;
  try {
    const frame: unknown = JSON.parse(raw);
    if (isRecord(frame) && frame.type === FrameType.chatRequest) return echoedId(frame.id);
  } catch {
    // not JSON: nothing to end
  }
  return;
}

/** A client's request id that can be named in its refusal (one too long to accept included). */
const echoedId = (id: unknown): string | undefined =>
  typeof id === "string" && id.length > 0 && id.length <= MAX_ECHOED_ID_CHARS ? id : undefined;

export function decideFrame(
  raw: string | ArrayBuffer | ArrayBufferView,
  transcript: readonly UIMessage[],
  policy: FramePolicy,
): FrameDecision {
  if (typeof raw !== "string") return refuse("invalid_request", "Binary frames are not accepted");
  const bytes = byteLength(raw);
  if (bytes > policy.maxFrameBytes) {
    // A chat request's refusal carries its id, so the SDK's error and done frames end that turn.
    return refuse(
      "payload_too_large",
      `Frames must be at most ${policy.maxFrameBytes} bytes`,
      oversizedRequestId(raw, bytes),
    );
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
      // A shared chat is everyone's: only an owner or admin of the org may wipe it for all.
      if (policy.sharedChat && policy.role !== "owner" && policy.role !== "admin") {
        return refuse(
          "forbidden",
          "Only an owner or admin of the organization can clear this chat",
        );
      }
      return { kind: "forward", frame: raw };
    case FrameType.cancel:
      if (typeof frame.id !== "string") {
        return refuse("invalid_request", "A cancel needs the id of the request to stop");
      }
      return { kind: "forward", frame: raw, cancel: { requestId: frame.id } };
    case FrameType.resumeRequest:
    case FrameType.resumeAck:
      return { kind: "forward", frame: raw };
    case FrameType.toolApproval: {
      if (!policy.toolApprovals) return refuse("forbidden", "This chat has no tools to approve");
      if (typeof frame.toolCallId !== "string" || typeof frame.approved !== "boolean") {
        return refuse("invalid_request", "A tool approval needs a toolCallId and approved");
      }
      // Only a call still waiting is answered: an approval replayed (a double-click on Approve)
      // would otherwise start another model call, paid for, that nobody asked for.
      if (!awaitsApproval(transcript, frame.toolCallId)) {
        return refuse("conflict", "This tool call is not waiting for an answer");
      }
      // Parley runs every tool on the server, so an answer always continues the reply there: the
      // frame forwarded asks the SDK to continue whatever the client sent. Without `autoContinue`
      // the SDK records the answer and waits for a client-side continuation that never comes,
      // and the call is stranded (answered, never run; a resend is refused as not waiting).
      return {
        kind: "forward",
        frame: JSON.stringify({
          type: FrameType.toolApproval,
          toolCallId: frame.toolCallId,
          approved: frame.approved,
          autoContinue: true,
        }),
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
    typeof frame.id === "string" && frame.id.length > 0 && frame.id.length <= MAX_REQUEST_ID_CHARS
      ? frame.id
      : null;
  if (!id) {
    // An id too long to accept still names the client's turn: its refusal ends it.
    return refuse(
      "invalid_request",
      `A chat request needs an id of at most ${MAX_REQUEST_ID_CHARS} characters`,
      echoedId(frame.id),
    );
  }
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

  if (body.trigger !== "submit-message" && body.trigger !== "regenerate-message") {
    return refuse(
      "invalid_request",
      'A chat request\'s trigger must be "submit-message" or "regenerate-message"',
      id,
    );
  }
  // The one body field kept: a model named for this turn. The agent decides whether the caller may
  // use it (members only, one their org allows) before anything is stored.
  let model: { model?: string } = {};
  if (body.model !== undefined) {
    const parsed = modelIdSchema.safeParse(body.model);
    if (!parsed.success) {
      return {
        ...refuse("invalid_request", "model must be a model id such as openai/gpt-4o-mini", id),
        field: "model",
      };
    }
    model = { model: parsed.data };
  }
  if (body.trigger === "regenerate-message") {
    // Regenerate answers the last user message again: the stored transcript minus its last reply.
    const last = transcript.at(-1);
    if (last?.role !== "assistant") {
      return refuse("invalid_request", "There is no reply to regenerate", id);
    }
    if (policy.sharedChat) {
      // In a shared chat, a regeneration spends the project's free turns on someone's message: only
      // its author may ask for it (the author is written by the server, `metadata.authorId`).
      const question = transcript.findLast((message) => message.role === "user");
      const authorId = (question?.metadata as { authorId?: unknown } | undefined)?.authorId;
      if (policy.authorId === undefined || authorId !== policy.authorId) {
        return refuse(
          "forbidden",
          "Only the author of the last message can regenerate its reply",
          id,
        );
      }
    }
    return {
      kind: "forward",
      frame: rebuilt(transcript.slice(0, -1), "regenerate-message"),
      requestId: id,
      trigger: "regenerate-message",
      ...model,
    };
  }

  const candidate = body.messages.at(-1);
  const user = userText(candidate);
  if ("problem" in user) return refuse("invalid_request", user.problem, id);
  const { text } = user;
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
    ...model,
  };
}
