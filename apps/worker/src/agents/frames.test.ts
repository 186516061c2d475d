import { describe, expect, it } from "vitest";
import { decideFrame, type FramePolicy, MAX_FRAME_JSON_DEPTH } from "./frames.ts";

const policy: FramePolicy = {
  maxFrameBytes: 256 * 1024,
  maxUserMessageBytes: 16 * 1024,
  toolApprovals: false,
  othersConnected: false,
};

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

const chatRequest = (body: string) =>
  JSON.stringify({
    type: "cf_agent_use_chat_request",
    id: "req-1",
    init: { method: "POST", body },
  });

const submit = (extra: string) =>
  `{"messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}],"trigger":"submit-message","junk":${extra}}`;

describe("decideFrame nesting guard (issue 12)", () => {
  it("refuses a frame nested deeper than the limit before parsing it", () => {
    const frame = `{"type":"cf_agent_chat_clear","junk":${nested(5_000)}}`;
    expect(decideFrame(frame, [], policy)).toMatchObject({
      kind: "refuse",
      code: "invalid_request",
    });
  });

  it("refuses a chat request whose body is nested too deep, ending that turn", () => {
    expect(decideFrame(chatRequest(submit(nested(5_000))), [], policy)).toEqual({
      kind: "refuse",
      code: "invalid_request",
      message: `The chat request body must nest at most ${MAX_FRAME_JSON_DEPTH} levels`,
      requestId: "req-1",
    });
  });

  it("still forwards frames and chat requests within the limit", () => {
    expect(decideFrame(JSON.stringify({ type: "cf_agent_chat_clear" }), [], policy).kind).toBe(
      "forward",
    );
    // The body sits 1 level in; `junk` adds its own levels below the body's object.
    const decision = decideFrame(chatRequest(submit(nested(MAX_FRAME_JSON_DEPTH - 1))), [], policy);
    expect(decision).toMatchObject({ kind: "forward", requestId: "req-1" });
  });
});
