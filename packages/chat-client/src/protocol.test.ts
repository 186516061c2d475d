import { describe, expect, it } from "vitest";
import {
  chatRequestFrame,
  chunkOf,
  FrameType,
  getMessagesUrl,
  parseServerFrame,
  webSocketUrl,
} from "./protocol.ts";

describe("frames", () => {
  it("builds the request frame as the SDK's transport does: body fields after messages and trigger", () => {
    const frame = JSON.parse(
      chatRequestFrame("r1", [{ id: "u1", role: "user", parts: [{ type: "text", text: "hi" }] }], {
        note: 1,
      }),
    );
    expect(frame).toMatchObject({
      type: FrameType.useChatRequest,
      id: "r1",
      init: { method: "POST" },
    });
    expect(Object.keys(JSON.parse(frame.init.body))).toEqual(["messages", "trigger", "note"]);
    expect(JSON.parse(frame.init.body).trigger).toBe("submit-message");
  });

  it("parses response frames and their chunks, and tells invalid frames apart", () => {
    const parsed = parseServerFrame(
      JSON.stringify({
        type: FrameType.useChatResponse,
        id: "r1",
        body: '{"type":"text-delta","id":"t","delta":"x"}',
        done: false,
        seq: 3,
      }),
    );
    expect("known" in parsed && parsed.known.type === FrameType.useChatResponse).toBe(true);
    if ("known" in parsed && parsed.known.type === FrameType.useChatResponse) {
      expect(parsed.known.seq).toBe(3);
      expect(chunkOf(parsed.known)).toEqual({ type: "text-delta", id: "t", delta: "x" });
      expect(chunkOf({ ...parsed.known, body: "" })).toBeUndefined();
      expect(chunkOf({ ...parsed.known, error: true })).toBeUndefined();
    }
    expect(parseServerFrame("nope")).toEqual({ invalid: "not JSON" });
    expect(parseServerFrame(JSON.stringify({ type: FrameType.useChatResponse }))).toEqual({
      invalid: "chat response without id",
    });
    expect(parseServerFrame(JSON.stringify({ type: "cf_agent_state", state: {} }))).toEqual({
      other: { type: "cf_agent_state", state: {} },
    });
  });

  it("derives the socket and get-messages URLs", () => {
    expect(webSocketUrl("https://x.dev/agents/a/b", "ct_1")).toBe(
      "wss://x.dev/agents/a/b?ticket=ct_1",
    );
    expect(webSocketUrl("http://x.dev/agents/a/b")).toBe("ws://x.dev/agents/a/b");
    expect(getMessagesUrl("ws://x.dev/agents/a/b/")).toBe("http://x.dev/agents/a/b/get-messages");
    expect(getMessagesUrl("http://x.dev/agents/a/b?v=1")).toBe(
      "http://x.dev/agents/a/b/get-messages?v=1",
    );
  });
});
