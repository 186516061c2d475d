import { describe, expect, it } from "vitest";
import { DEFAULT_BEHAVIOUR, planCompletion, totalsAfter } from "./plan.ts";
import { computeCost } from "./pricing.ts";
import { devMarkdownReply, devReasoning, MARKDOWN_REPLY } from "./reply.ts";
import { type ChatRequest, estimatePromptTokens, parseChatRequest } from "./request.ts";

function request(body: Record<string, unknown>): ChatRequest {
  const parsed = parseChatRequest(body);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.request;
}

const TOOLS = [{ type: "function", function: { name: "save", parameters: {} } }];

describe("estimatePromptTokens", () => {
  it("counts a quarter token per character of content, tool calls and tools", () => {
    expect(estimatePromptTokens({ messages: [{ role: "user", content: "abcd" }] })).toBe(1);
    expect(estimatePromptTokens({ messages: [{ role: "user", content: "abcde" }] })).toBe(2);
    expect(estimatePromptTokens({ messages: [{ role: "user", content: "" }] })).toBe(1);
    const calls = [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }];
    const messages = [
      { role: "system", content: [{ type: "text", text: "12345678" }] },
      { role: "assistant", content: null, tool_calls: calls },
    ];
    const chars = 8 + JSON.stringify(calls).length + JSON.stringify(TOOLS).length;
    expect(estimatePromptTokens({ messages, tools: TOOLS })).toBe(Math.ceil(chars / 4));
  });
});

describe("planCompletion", () => {
  it("spends max_tokens on reasoning first, then on the reply", () => {
    const plan = planCompletion(
      request({
        messages: [{ role: "user", content: "think hard" }],
        reasoning: { effort: "high" },
        max_tokens: 10,
      }),
    );
    expect(plan.units.map((u) => u.kind)).toEqual([
      ...Array(8).fill("reasoning"),
      "content",
      "content",
    ]);
    expect(plan.finishReason).toBe("length");
    expect(totalsAfter(plan)).toEqual({
      completionTokens: 10,
      reasoningTokens: 8,
      cost: computeCost("parley/dev", plan.promptTokens, 10),
    });
    const reasoning = plan.units.map((u) => (u.kind === "reasoning" ? u.text : "")).join("");
    expect(reasoning).toBe(devReasoning("think hard"));
  });

  it("counts hidden reasoning (exclude) and caps it with reasoning.max_tokens", () => {
    const plan = planCompletion(
      request({
        messages: [{ role: "user", content: "q" }],
        reasoning: { max_tokens: 3, exclude: true },
      }),
    );
    const reasoning = plan.units.filter((u) => u.kind === "reasoning");
    expect(reasoning).toHaveLength(3);
    expect(reasoning.every((u) => u.kind === "reasoning" && !u.visible)).toBe(true);
    expect(plan.finishReason).toBe("stop");
  });

  it("does not reason when reasoning is disabled", () => {
    const plan = planCompletion(
      request({ messages: [{ role: "user", content: "q" }], reasoning: { enabled: false } }),
    );
    expect(plan.units.some((u) => u.kind === "reasoning")).toBe(false);
  });

  it("plans parallel tool calls, skipping tools not offered and tool_choice none", () => {
    const content = '[[tool:save {"a":1}]] [[tool:missing]] [[tool:save]]';
    const plan = planCompletion(request({ messages: [{ role: "user", content }], tools: TOOLS }));
    expect(plan.units).toEqual([
      { kind: "tool-name", index: 0, name: "save" },
      { kind: "tool-arguments", index: 0, text: '{"a"' },
      { kind: "tool-arguments", index: 0, text: ":1}" },
      { kind: "tool-name", index: 1, name: "save" },
      { kind: "tool-arguments", index: 1, text: "{}" },
    ]);
    expect(plan.finishReason).toBe("tool_calls");
    const none = planCompletion(
      request({ messages: [{ role: "user", content }], tools: TOOLS, tool_choice: "none" }),
    );
    expect(none.finishReason).toBe("stop");
  });

  it("answers [[markdown]] with the fixed document, one word per unit, line breaks kept", () => {
    const plan = planCompletion(
      request({ messages: [{ role: "user", content: "render this [[markdown]] [[tokens:3]]" }] }),
    );
    const units = plan.units.map((u) => (u.kind === "content" ? u.text : null));
    expect(units.every((text) => text !== null)).toBe(true);
    expect(units.join("")).toBe(MARKDOWN_REPLY);
    expect(units.length).toBe(MARKDOWN_REPLY.split(/\s+/).length);
    expect(MARKDOWN_REPLY).toMatch(/^## .+\n/);
    expect(MARKDOWN_REPLY).toContain("\n- ");
    expect(MARKDOWN_REPLY).toContain("\n| --- |");
    expect(MARKDOWN_REPLY).toMatch(/\n```ts\n[\s\S]*\n```$/);
    expect(plan.finishReason).toBe("stop");

    const cut = planCompletion(
      request({ messages: [{ role: "user", content: "[[markdown]]" }], max_tokens: 5 }),
    );
    expect(cut.units.map((u) => (u.kind === "content" ? u.text : "")).join("")).toBe(
      devMarkdownReply({ maxTokens: 5 }),
    );
    expect(devMarkdownReply({ maxTokens: 5 })).toBe("## Dev model markdown\n\nA");
    expect(cut.finishReason).toBe("length");
  });

  it("takes faults and pacing from triggers over server defaults", () => {
    const behaviour = {
      ...DEFAULT_BEHAVIOUR,
      latencyMs: 5,
      fault: { kind: "hang", afterTokens: 1 },
    } as const;
    const plain = planCompletion(
      request({ messages: [{ role: "user", content: "x" }] }),
      behaviour,
    );
    expect(plain.fault).toEqual({ kind: "hang", afterTokens: 1 });
    expect(plain.latencyMs).toBe(5);
    const triggered = planCompletion(
      request({
        messages: [{ role: "user", content: "x [[error-after:2]] [[latency:0]] [[tps:9]]" }],
      }),
      behaviour,
    );
    expect(triggered.fault).toEqual({ kind: "error", afterTokens: 2 });
    expect(triggered.latencyMs).toBe(0);
    expect(triggered.tokensPerSecond).toBe(9);
  });

  it("paces each model at its own speed unless the server or a trigger says otherwise", () => {
    const ask = (model: string, content = "x") =>
      planCompletion(request({ model, messages: [{ role: "user", content }] }));
    expect([ask("parley/dev").latencyMs, ask("parley/dev").tokensPerSecond]).toEqual([0, 0]);
    expect([ask("parley/dev-large").latencyMs, ask("parley/dev-large").tokensPerSecond]).toEqual([
      300, 80,
    ]);
    expect(ask("parley/dev-large", "x [[tps:0]] [[latency:0]]").tokensPerSecond).toBe(0);
    const server = { ...DEFAULT_BEHAVIOUR, latencyMs: 0, tokensPerSecond: 0 };
    expect(
      planCompletion(
        request({ model: "parley/dev-large", messages: [{ role: "user", content: "x" }] }),
        server,
      ).latencyMs,
    ).toBe(0);
  });

  it("plans encrypted reasoning only for a visible reasoning step that ends in tool calls", () => {
    const step = (model: string, content: string, reasoning: unknown = { effort: "low" }) =>
      planCompletion(
        request({ model, tools: TOOLS, reasoning, messages: [{ role: "user", content }] }),
      ).encryptedReasoning;
    expect(step("parley/dev-large", "[[tool:save]]")).toBe(true);
    expect(step("parley/dev-large", "no tool")).toBe(false);
    expect(step("parley/dev-large", "[[tool:save]]", { exclude: true })).toBe(false);
    expect(step("parley/dev", "[[tool:save]]")).toBe(false);
    expect(step("parley/dev", "[[tool:save]] [[reasoning:encrypted]]")).toBe(true);
    // A model that does not reason ignores reasoning, and so carries nothing.
    expect(step("parley/dev-fast", "[[tool:save]] [[reasoning:encrypted]]")).toBe(false);
  });

  it("combines a typed error with its count, and carries Retry-After for HTTP faults", () => {
    const plan = planCompletion(
      request({
        messages: [
          {
            role: "user",
            content: "[[error-after:4]] [[error:rate_limit_exceeded]] [[retry-after:9]]",
          },
        ],
      }),
    );
    expect(plan.fault).toEqual({ kind: "error", afterTokens: 4, errorType: "rate_limit_exceeded" });
    expect(plan.retryAfterSeconds).toBe(9);
  });
});
