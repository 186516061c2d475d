/**
 * The new shapes through the client stacks the platform uses: `ai`'s streamText over
 * `@openrouter/ai-sdk-provider` (encrypted reasoning carried across a tool loop, prompt-cache
 * usage, typed mid-stream errors, 429 with Retry-After), and `@ai-sdk/openai-compatible` against
 * the model that reports no cost.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import { APICallError, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  computeCost,
  DEV_FAST_MODEL_ID,
  DEV_LARGE_MODEL_ID,
  DEV_LOCAL_MODEL_ID,
  type DevModel,
  devReasoning,
  devReply,
  devToolResultReply,
  startDevModel,
} from "../src/index.ts";

let server: DevModel;
let openrouter: ReturnType<typeof createOpenRouter>;

beforeAll(async () => {
  server = await startDevModel({ generationDelayMs: 0, latencyMs: 0, tokensPerSecond: 0 });
  openrouter = createOpenRouter({ apiKey: "dev", baseURL: server.url });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
});

type Sent = { messages: { role: string; reasoning_details?: { type: string; id?: string }[] }[] };

describe("encrypted reasoning through streamText's tool loop", () => {
  it("comes back on the next step unchanged, so the large model answers the tool result", async () => {
    const prompt = 'Look it up [[tool:lookup {"q":"rivers"}]]';
    const errors: unknown[] = [];
    const result = streamText({
      model: openrouter(DEV_LARGE_MODEL_ID, { reasoning: { effort: "high" } }),
      prompt,
      tools: {
        lookup: tool({
          inputSchema: z.object({ q: z.string() }),
          execute: async ({ q }) => `three results for ${q}`,
        }),
      },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    expect(await result.text).toBe(devToolResultReply("lookup", "three results for rivers"));
    expect(errors).toEqual([]);
    const steps = await result.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0]?.reasoningText).toBe(devReasoning(prompt));

    const [first, second] = server.requests();
    expect(first?.body).toMatchObject({ reasoning: { effort: "high" } });
    const assistant = (second?.body as Sent | undefined)?.messages.find(
      (m) => m.role === "assistant",
    );
    const carried = assistant?.reasoning_details?.filter((d) => d.type === "reasoning.encrypted");
    expect(carried).toHaveLength(1);
    expect(carried?.[0]?.id).toMatch(/^rs_/);
  });

  it("is refused when a client drops it between the steps", async () => {
    const errors: unknown[] = [];
    const result = streamText({
      model: openrouter(DEV_LARGE_MODEL_ID, { reasoning: { effort: "high" } }),
      prompt: "Look it up [[tool:lookup]]",
      tools: { lookup: tool({ inputSchema: z.object({}), execute: async () => "found" }) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
      // A loop that forgets the provider's metadata on the messages it sends back.
      prepareStep: ({ messages }) => ({
        messages: messages.map((message) =>
          message.role === "assistant" && Array.isArray(message.content)
            ? {
                ...message,
                content: message.content
                  .filter((part) => part.type !== "reasoning")
                  .map((part) => ({ ...part, providerOptions: undefined })),
              }
            : message,
        ),
      }),
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    expect(APICallError.isInstance(errors[0])).toBe(true);
    expect(errors[0]).toMatchObject({ statusCode: 400 });
    expect((errors[0] as APICallError).message).toContain("reasoning_details");
    expect(server.requests()).toHaveLength(2);
  });
});

describe("prompt cache usage through the provider", () => {
  it("reports cache reads and writes as the SDK's input token details, priced in usage.cost", async () => {
    const system = "You answer questions about rivers. ".repeat(12);
    const run = async (prompt: string) => {
      const result = streamText({ model: openrouter(DEV_FAST_MODEL_ID), system, prompt });
      await result.consumeStream();
      return {
        usage: await result.usage,
        cost: ((await result.providerMetadata)?.openrouter?.usage as { cost?: number } | undefined)
          ?.cost,
      };
    };
    const systemTokens = Math.floor(system.length / 4);
    const one = await run("Which river is longest? [[cache]]");
    expect(one.usage.inputTokenDetails).toEqual({
      noCacheTokens: one.usage.inputTokens,
      cacheReadTokens: 0,
      cacheWriteTokens: systemTokens,
    });
    const two = await run("And the widest? [[cache]]");
    expect(two.usage.inputTokenDetails).toMatchObject({
      cacheReadTokens: systemTokens,
      cacheWriteTokens: 0,
    });
    const input = two.usage.inputTokens ?? -1;
    expect(two.cost).toBe(
      computeCost(DEV_FAST_MODEL_ID, input, 24, { readTokens: systemTokens, writeTokens: 0 }),
    );
    expect(two.cost).toBeLessThan(one.cost ?? 0);
  });
});

describe("typed errors through the provider", () => {
  it("keeps error.metadata.error_type on a mid-stream error", async () => {
    const errors: unknown[] = [];
    const result = streamText({
      model: openrouter(DEV_FAST_MODEL_ID),
      prompt: "Go on [[error:provider_overloaded]]",
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    // The SDK wraps the chunk's error, status and typed body kept: what a platform can map from.
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      name: "AI_StreamProviderError",
      statusCode: 503,
      message: "Provider is temporarily overloaded (dev model)",
      data: {
        code: 503,
        metadata: { error_type: "provider_overloaded", provider_code: "overloaded_error" },
      },
    });
    expect(await result.finishReason).toBe("error");
  });

  it("surfaces a 429's Retry-After and typed body on the APICallError", async () => {
    const errors: unknown[] = [];
    const result = streamText({
      model: openrouter(DEV_FAST_MODEL_ID),
      prompt: "Too fast [[http-error:429]] [[retry-after:12]]",
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    const [error] = errors;
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      statusCode: 429,
      isRetryable: true,
      responseHeaders: { "retry-after": "12" },
      data: { error: { metadata: { error_type: "rate_limit_exceeded" } } },
    });
    expect(server.generations()).toEqual([]);
  });
});

describe("parley/dev-local through @ai-sdk/openai-compatible", () => {
  const local = () =>
    createOpenAICompatible({ name: "local", baseURL: server.url, includeUsage: true });

  it("streams the reply with token usage and no cost or generation id", async () => {
    const prompt = "Hello local model, please answer";
    const result = streamText({ model: local()(DEV_LOCAL_MODEL_ID), prompt });
    expect(await result.text).toBe(devReply(prompt));
    const usage = await result.usage;
    expect(usage.inputTokens).toBe(8);
    expect(usage.outputTokens).toBe(24);
    const metadata = await result.providerMetadata;
    expect(JSON.stringify(metadata ?? {})).not.toContain("cost");
    expect((await result.response).id).toMatch(/^chatcmpl-/);
    expect((await result.response).headers?.["x-generation-id"]).toBeUndefined();
    expect(server.requests()[0]?.body).toMatchObject({ stream_options: { include_usage: true } });
    expect(server.generations()).toEqual([]);
  });

  it("runs a tool loop", async () => {
    const result = streamText({
      model: local()(DEV_LOCAL_MODEL_ID),
      prompt: 'Save it [[tool:save {"v":"x"}]]',
      tools: {
        save: tool({ inputSchema: z.object({ v: z.string() }), execute: async () => "saved" }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe(devToolResultReply("save", "saved"));
    expect((await result.totalUsage).outputTokens).toBeGreaterThan(24);
  });

  it("sends no usage chunk to a client that does not ask, as vLLM and OpenAI do", async () => {
    const bare = createOpenAICompatible({ name: "bare", baseURL: server.url });
    const result = streamText({ model: bare(DEV_LOCAL_MODEL_ID), prompt: "no usage please" });
    expect(await result.text).toBe(devReply("no usage please"));
    expect((await result.usage).outputTokens).toBeUndefined();
  });
});
