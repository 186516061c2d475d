/**
 * The parts of Parley's chat wire protocol that live outside the agents SDK: refusal frames,
 * final close codes, the resume-none frame and the request body that carries only the new message.
 * Pure, so they are tested without a socket.
 */
import type { UIMessage } from "ai";

/** A refusal the agent sends on the socket (`parley_error`), outside the chat protocol. */
export interface ParleyError {
  code: string;
  message: string;
  /**
   * The chat request it refused, when it refused one: the server stored nothing of it (no
   * message, no reply), so the client takes its message back out of the transcript.
   */
  requestId?: string;
  /**
   * What the code alone does not say: for `spend_limit`, which limit (`limit`, e.g.
   * `member_daily`), its `period` and when it `resetsAt` (ISO).
   */
  details?: Record<string, string>;
}

/** The codes of a refusal for money: the org is out of credits or a spend limit stopped it. */
export const isBillingRefusal = (refusal: ParleyError | null): boolean =>
  refusal?.code === "spend_limit" || refusal?.code === "insufficient_credits";

/**
 * What a final close of the chat's socket means for the person (the server closes with 4403 when
 * their access ended, 4410 when the chat was erased; the SDK does not reconnect after either).
 * Any other close is not final (the SDK reconnects with a fresh ticket) and gives null.
 */
export function closeNotice(code: number): ParleyError | null {
  if (code === 4403) {
    return { code: "forbidden", message: "You no longer have access to this chat." };
  }
  if (code === 4410) return { code: "gone", message: "This chat was erased." };
  return null;
}

/** The refusal in a socket frame, or null when the frame is anything else (or not JSON). */
export function readParleyError(data: unknown): ParleyError | null {
  if (typeof data !== "string") return null;
  try {
    const frame = JSON.parse(data) as {
      type?: unknown;
      requestId?: unknown;
      error?: { code?: unknown; message?: unknown; details?: unknown };
    };
    if (frame.type !== "parley_error") return null;
    const details =
      typeof frame.error?.details === "object" && frame.error.details !== null
        ? Object.fromEntries(
            Object.entries(frame.error.details).filter(
              (entry): entry is [string, string] => typeof entry[1] === "string",
            ),
          )
        : {};
    return {
      code: typeof frame.error?.code === "string" ? frame.error.code : "internal",
      message: typeof frame.error?.message === "string" ? frame.error.message : "Request refused",
      ...(typeof frame.requestId === "string" && frame.requestId !== ""
        ? { requestId: frame.requestId }
        : {}),
      ...(Object.keys(details).length > 0 ? { details } : {}),
    };
  } catch {
    return null;
  }
}

/**
 * After a reconnect the server says whether a reply is still streaming; "none" means a reply that
 * finished while the socket was down lost its chunks, so the transcript must be reloaded.
 */
export const isStreamResumeNone = (data: unknown): boolean =>
  typeof data === "string" && data.includes('"cf_agent_stream_resume_none"');

/**
 * The server keeps the transcript and takes only the new message from a request, so the request
 * carries only that: its size stays flat however long the chat (the transport lets a request's
 * body replace the messages it would send).
 */
export const lastMessageOnly = ({ messages }: { messages: UIMessage[] }) => ({
  body: { messages: messages.slice(-1) },
});

/** The answer text of a message (text parts only, reasoning left out): what Copy copies. */
export const messageText = (message: Pick<UIMessage, "parts">): string =>
  message.parts
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("")
    .trim();
