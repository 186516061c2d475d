import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import {
  closeNotice,
  isStreamResumeNone,
  lastMessageOnly,
  messageText,
  readParleyError,
} from "./protocol.ts";

describe("closeNotice", () => {
  it("tells the person why a chat closed for good, and stays quiet for closes that reconnect", () => {
    expect(closeNotice(4403)).toEqual({
      code: "forbidden",
      message: "You no longer have access to this chat.",
    });
    expect(closeNotice(4410)).toMatchObject({ code: "gone" });
    // 1013: the token expired; the SDK reconnects with a fresh ticket. 1000/1006: ordinary closes.
    for (const code of [1000, 1006, 1013]) expect(closeNotice(code)).toBeNull();
  });
});

describe("readParleyError", () => {
  it("reads refusal frames and ignores the chat protocol's own frames", () => {
    expect(
      readParleyError(
        JSON.stringify({
          type: "parley_error",
          requestId: "r1",
          error: { code: "payload_too_large", message: "Message too large" },
        }),
      ),
    ).toEqual({ code: "payload_too_large", message: "Message too large", requestId: "r1" });
    // Which limit refused a turn, and when it resets; anything but strings is dropped.
    expect(
      readParleyError(
        JSON.stringify({
          type: "parley_error",
          requestId: null,
          error: {
            code: "spend_limit",
            message: "Limit",
            details: { limit: "member_daily", period: "day", bad: 3 },
          },
        }),
      ),
    ).toEqual({
      code: "spend_limit",
      message: "Limit",
      details: { limit: "member_daily", period: "day" },
    });
    expect(readParleyError(JSON.stringify({ type: "parley_error" }))).toEqual({
      code: "internal",
      message: "Request refused",
    });
    expect(readParleyError(JSON.stringify({ type: "cf_agent_use_chat_response" }))).toBeNull();
    expect(readParleyError("not json")).toBeNull();
    expect(readParleyError(new ArrayBuffer(2))).toBeNull();
  });
});

describe("isStreamResumeNone", () => {
  it("spots the resume-none frame only", () => {
    expect(isStreamResumeNone(JSON.stringify({ type: "cf_agent_stream_resume_none" }))).toBe(true);
    expect(isStreamResumeNone(JSON.stringify({ type: "cf_agent_stream_resuming" }))).toBe(false);
  });
});

describe("lastMessageOnly", () => {
  it("sends only the newest message, never the history", () => {
    const messages = ["a", "b", "c"].map(
      (id) => ({ id, role: "user", parts: [{ type: "text", text: id }] }) as UIMessage,
    );
    expect(lastMessageOnly({ messages }).body.messages.map((m) => m.id)).toEqual(["c"]);
  });
});

describe("messageText", () => {
  it("joins the text parts and leaves reasoning out", () => {
    const message = {
      parts: [
        { type: "reasoning", text: "hmm" },
        { type: "text", text: "Hello " },
        { type: "text", text: "world" },
      ],
    } as UIMessage;
    expect(messageText(message)).toBe("Hello world");
  });
});
