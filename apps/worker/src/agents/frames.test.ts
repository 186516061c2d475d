import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { chatTextProblem, decideFrame, type FramePolicy, MAX_FRAME_JSON_DEPTH } from "./frames.ts";

const policy: FramePolicy = {
  maxFrameBytes: 256 * 1024,
  maxUserMessageBytes: 16 * 1024,
  toolApprovals: false,
  sharedChat: false,
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

const request = (id: unknown, body: Record<string, unknown>) =>
  JSON.stringify({
    type: "cf_agent_use_chat_request",
    id,
    init: { method: "POST", body: JSON.stringify(body) },
  });
const says = (text: string, trigger: unknown = "submit-message") =>
  request("req-2", {
    messages: [{ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text }] }],
    trigger,
  });

describe("decideFrame, second probe (issue 12)", () => {
  it("chat text: invisible-only, control characters and unpaired surrogates are refused; bidi is not", () => {
    for (const bad of [
      "\u200B\u200C\u200D\uFEFF",
      "\u2060 \u00AD",
      "\uFE0F",
      "\u3164",
      "a\u0000b",
      "bell\u0007",
      "half \uD83D",
      "\uDE00 half",
      "",
    ]) {
      expect(chatTextProblem(bad), JSON.stringify(bad)).not.toBeNull();
    }
    for (const good of [
      "שלום \u202Bעולם\u202C",
      "\u2067مرحبا\u2069 hi",
      "tab\there\r\nnext",
      "😀",
      "\u200Bx",
    ]) {
      expect(chatTextProblem(good), JSON.stringify(good)).toBeNull();
    }
    expect(decideFrame(says("\u200B\u200B"), [], policy)).toMatchObject({
      kind: "refuse",
      code: "invalid_request",
      requestId: "req-2",
    });
  });

  it("a trigger other than submit-message or regenerate-message is refused, with the request id", () => {
    const missing = request("req-2", {
      messages: [{ id: "m", role: "user", parts: [{ type: "text", text: "hi" }] }],
    });
    for (const frame of [
      ...["resume-stream", "submit", null, 1].map((t) => says("hi", t)),
      missing,
    ]) {
      expect(decideFrame(frame, [], policy)).toMatchObject({
        kind: "refuse",
        code: "invalid_request",
        requestId: "req-2",
      });
    }
  });

  it("an oversized chat request is refused under its id; an oversized other frame has none", () => {
    const big = says("z".repeat(300 * 1024));
    expect(decideFrame(big, [], policy)).toMatchObject({
      kind: "refuse",
      code: "payload_too_large",
      requestId: "req-2",
    });
    const other = JSON.stringify({ type: "cf_agent_chat_clear", junk: "z".repeat(300 * 1024) });
    const refusal = decideFrame(other, [], policy);
    expect(refusal).toMatchObject({ kind: "refuse", code: "payload_too_large" });
    expect("requestId" in refusal).toBe(false);
  });

  it("in a shared chat only an owner or admin clears, and only the author regenerates", () => {
    const shared = { ...policy, sharedChat: true };
    const clear = JSON.stringify({ type: "cf_agent_chat_clear" });
    expect(decideFrame(clear, [], { ...shared, role: "member" })).toMatchObject({
      code: "forbidden",
    });
    expect(decideFrame(clear, [], { ...shared, role: "admin" }).kind).toBe("forward");
    expect(decideFrame(clear, [], { ...policy, role: "member" }).kind).toBe("forward");
    const transcript: UIMessage[] = [
      { id: "u", role: "user", parts: [{ type: "text", text: "q" }], metadata: { authorId: "a" } },
      { id: "r", role: "assistant", parts: [{ type: "text", text: "r" }] },
    ];
    const regenerate = request("req-3", { messages: [], trigger: "regenerate-message" });
    expect(decideFrame(regenerate, transcript, { ...shared, authorId: "b" })).toMatchObject({
      code: "forbidden",
      requestId: "req-3",
    });
    expect(decideFrame(regenerate, transcript, { ...shared, authorId: "a" }).kind).toBe("forward");
  });

  it("a tool approval must name a call still waiting for approval", () => {
    const withTools = { ...policy, toolApprovals: true };
    const reply = (state: string): UIMessage[] => [
      {
        id: "r",
        role: "assistant",
        parts: [
          {
            type: "tool-update_project_memory",
            toolCallId: "call-1",
            state,
            input: {},
            approval: { id: "call-1" },
          } as unknown as UIMessage["parts"][number],
        ],
      },
    ];
    const approve = (toolCallId: string) =>
      JSON.stringify({
        type: "cf_agent_tool_approval",
        toolCallId,
        approved: true,
        autoContinue: true,
      });
    expect(decideFrame(approve("call-1"), reply("approval-requested"), withTools).kind).toBe(
      "forward",
    );
    expect(decideFrame(approve("call-1"), reply("approval-responded"), withTools)).toMatchObject({
      code: "conflict",
    });
    expect(decideFrame(approve("call-1"), reply("output-available"), withTools)).toMatchObject({
      code: "conflict",
    });
    expect(decideFrame(approve("call-2"), reply("approval-requested"), withTools)).toMatchObject({
      code: "conflict",
    });
  });
});

describe("decideFrame, a tool approval as the contract documents it", () => {
  const waiting: UIMessage[] = [
    {
      id: "r",
      role: "assistant",
      parts: [
        {
          type: "tool-request_refund",
          toolCallId: "call-1",
          state: "approval-requested",
          input: {},
          approval: { id: "call-1" },
        } as unknown as UIMessage["parts"][number],
      ],
    },
  ];
  const withTools = { ...policy, toolApprovals: true };

  it.each([
    ["without autoContinue", {}],
    ["with autoContinue false", { autoContinue: false }],
    ["with extra fields", { autoContinue: true, clientTools: [{ name: "x" }] }],
  ])("forwards an answer %s as one the server continues, and nothing else", (_, extra) => {
    for (const approved of [true, false]) {
      const sent = { type: "cf_agent_tool_approval", toolCallId: "call-1", approved, ...extra };
      const decision = decideFrame(JSON.stringify(sent), waiting, withTools);
      expect(decision).toMatchObject({
        kind: "forward",
        approval: { toolCallId: "call-1", approved },
      });
      if (decision.kind !== "forward") continue;
      expect(JSON.parse(decision.frame)).toEqual({
        type: "cf_agent_tool_approval",
        toolCallId: "call-1",
        approved,
        autoContinue: true,
      });
    }
  });
});

describe("decideFrame, a model named in the chat body (issue 29)", () => {
  const naming = (model: unknown, trigger = "submit-message") =>
    request("req-3", {
      messages: [{ id: crypto.randomUUID(), role: "user", parts: [{ type: "text", text: "hi" }] }],
      trigger,
      model,
      // Everything else of the body is still dropped.
      memberId: "someone-else",
    });

  it("keeps a well-formed model id for the agent to check, and drops the rest of the body", () => {
    const decision = decideFrame(naming("parley/dev-fast"), [], policy);
    expect(decision).toMatchObject({ kind: "forward", model: "parley/dev-fast" });
    if (decision.kind !== "forward") return;
    expect(JSON.parse(JSON.parse(decision.frame).init.body)).not.toHaveProperty("model");
    expect(decision.frame).not.toContain("someone-else");
    const reply: UIMessage = { id: "r", role: "assistant", parts: [{ type: "text", text: "x" }] };
    expect(decideFrame(naming("parley/dev", "regenerate-message"), [reply], policy)).toMatchObject({
      kind: "forward",
      trigger: "regenerate-message",
      model: "parley/dev",
    });
    expect(decideFrame(says("hi"), [], policy)).not.toHaveProperty("model");
  });

  it("refuses a model that is not a model id, under the request id, naming the field", () => {
    for (const bad of [42, null, "", "../x", "a b", "x".repeat(201), { id: "parley/dev" }]) {
      expect(decideFrame(naming(bad), [], policy), JSON.stringify(bad)).toMatchObject({
        kind: "refuse",
        code: "invalid_request",
        field: "model",
        requestId: "req-3",
      });
    }
  });
});
