import { describe, expect, it } from "vitest";
import { describeReason, previewStatus, readAssistantMeta } from "./reply-meta.ts";

describe("readAssistantMeta", () => {
  it("reads price, steps, tokens, finish and the failure message", () => {
    expect(
      readAssistantMeta({
        priceMicros: 4200,
        toolPriceMicros: 1000,
        steps: 2,
        finish: "failed",
        error: { message: "Model unavailable" },
        tokens: { promptTokens: 10, completionTokens: 5 },
      }),
    ).toEqual({
      priceMicros: 4200,
      toolPriceMicros: 1000,
      steps: 2,
      finish: "failed",
      error: "Model unavailable",
      tokens: { promptTokens: 10, completionTokens: 5, cachedPromptTokens: 0, reasoningTokens: 0 },
    });
  });

  it("keeps the server's other stop and failure codes apart from billing codes", () => {
    expect(readAssistantMeta({ finish: "failed", code: "model_stalled" })).toEqual({
      finish: "failed",
      reason: "model_stalled",
    });
    expect(readAssistantMeta({ finish: "completed", code: "spend_limit" })).toEqual({
      finish: "completed",
      code: "spend_limit",
    });
    expect(describeReason("model_stalled")).toBe("The model stopped responding.");
    expect(describeReason("tool_failed")).toBe("tool_failed");
  });

  it("drops fields of the wrong type instead of trusting them", () => {
    expect(readAssistantMeta({ priceMicros: 1.5, code: 42, steps: "2", finish: "paused" })).toEqual(
      {},
    );
    expect(readAssistantMeta("nope")).toEqual({});
    expect(readAssistantMeta(null)).toEqual({});
  });
});

describe("previewStatus", () => {
  it("reads the free turns left from the newest reply", () => {
    expect(
      previewStatus([
        { role: "assistant", metadata: { freeTurnsLeft: 5 } },
        { role: "user" },
        { role: "assistant", metadata: { freeTurnsLeft: 4 } },
        { role: "user" },
      ]),
    ).toEqual({ freeTurnsLeft: 4, exhausted: false });
  });

  it("is exhausted on preview_exhausted, and knows nothing before the first reply", () => {
    expect(
      previewStatus([
        { role: "assistant", metadata: { code: "preview_exhausted", freeTurnsLeft: 0 } },
      ]),
    ).toEqual({ freeTurnsLeft: 0, exhausted: true });
    expect(previewStatus([])).toEqual({ freeTurnsLeft: null, exhausted: false });
  });
});
