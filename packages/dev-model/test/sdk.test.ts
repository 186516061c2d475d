/**
 * The dev model driven by the client stack the platform uses: ai's streamText/generateText over
 * @openrouter/ai-sdk-provider pointed at the server's base URL.
 */
import { createOpenRouter } from "@openrouter/ai-sdk-provider";
import { APICallError, generateText, stepCountIs, streamText, tool } from "ai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  computeCost,
  type DevModel,
  devMarkdownReply,
  devReasoning,
  devReply,
  devToolResultReply,
  estimatePromptTokens,
  type Generation,
  startDevModel,
} from "../src/index.ts";

const MODEL = "openai/gpt-4o-mini";

let server: DevModel;
let openrouter: ReturnType<typeof createOpenRouter>;

beforeAll(async () => {
  // Generation records at once: the delay a lookup must outwait has its own test (http.test.ts).
  server = await startDevModel({ generationDelayMs: 0 });
  openrouter = createOpenRouter({ apiKey: "dev", baseURL: server.url });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
});

type OpenRouterUsage = { cost?: number; promptTokens?: number; completionTokens?: number };

function costOf(metadata: unknown): number | undefined {
  const openrouterMeta = (metadata as { openrouter?: { usage?: OpenRouterUsage } } | undefined)
    ?.openrouter;
  return openrouterMeta?.usage?.cost;
}

async function generationOf(id: string): Promise<Generation> {
  // The server records a cancelled generation when it sees the socket close, which can trail the
  // client's abort by a tick or two.
  for (let i = 0; i < 100; i++) {
    const found = server.generation(id);
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`generation ${id} was never recorded`);
}

describe("streamText through @openrouter/ai-sdk-provider", () => {
  it("streams the deterministic reply and reports usage and cost per step", async () => {
    const prompt = "Hello there dev model, please answer";
    const steps: {
      cost: number | undefined;
      input: number | undefined;
      output: number | undefined;
    }[] = [];
    let finishCost: number | undefined;
    const result = streamText({
      model: openrouter(MODEL),
      prompt,
      onStepFinish: (step) => {
        steps.push({
          cost: costOf(step.providerMetadata),
          input: step.usage.inputTokens,
          output: step.usage.outputTokens,
        });
      },
      onFinish: (event) => {
        finishCost = costOf(event.providerMetadata);
      },
    });

    expect(await result.text).toBe(devReply(prompt));
    expect(await result.text).toBe(
      "Dev model reply to: Hello there dev model, please... flint prairie breeze autumn saffron hazel moss clover saffron breeze sage anchor flint ivory ivory",
    );
    expect(await result.finishReason).toBe("stop");
    const usage = await result.usage;
    // 36 characters -> ceil(36 / 4) = 9 prompt tokens; 24 reply words.
    expect(usage.inputTokens).toBe(9);
    expect(usage.outputTokens).toBe(24);
    expect(usage.totalTokens).toBe(33);
    expect(steps).toEqual([{ cost: 9 * 0.00000015 + 24 * 0.0000006, input: 9, output: 24 }]);
    expect(steps[0]?.cost).toBe(computeCost(MODEL, 9, 24));
    expect(finishCost).toBe(computeCost(MODEL, 9, 24));

    const [request] = server.requests();
    expect(server.requests()).toHaveLength(1);
    expect(request?.stream).toBe(true);
    expect(request?.model).toBe(MODEL);
    const generationId = request?.generationId ?? "";
    expect((await result.response).id).toBe(generationId);
    const generation = await generationOf(generationId);
    expect(generation).toMatchObject({
      model: MODEL,
      streamed: true,
      cancelled: false,
      finish_reason: "stop",
      tokens_prompt: 9,
      tokens_completion: 24,
      total_cost: computeCost(MODEL, 9, 24),
    });
  });

  it("runs a tool call the SDK parses, then ends a multi-step run with text", async () => {
    const prompt = 'Remember my colour [[tool:update_memory {"key":"colour","value":"teal"}]]';
    const executed: unknown[] = [];
    const stepCosts: { cost: number | undefined; expected: number }[] = [];
    const result = streamText({
      model: openrouter(MODEL),
      prompt,
      tools: {
        update_memory: tool({
          description: "Store a fact about the user",
          inputSchema: z.object({ key: z.string(), value: z.string() }),
          execute: async (input) => {
            executed.push(input);
            return { saved: input.key };
          },
        }),
      },
      stopWhen: stepCountIs(3),
      onStepFinish: (step) => {
        stepCosts.push({
          cost: costOf(step.providerMetadata),
          expected: computeCost(MODEL, step.usage.inputTokens ?? -1, step.usage.outputTokens ?? -1),
        });
      },
    });

    const text = await result.text;
    const steps = await result.steps;
    expect(executed).toEqual([{ key: "colour", value: "teal" }]);
    expect(steps).toHaveLength(2);
    expect(steps[0]?.finishReason).toBe("tool-calls");
    expect(steps[0]?.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ["update_memory", { key: "colour", value: "teal" }],
    ]);
    expect(steps[0]?.toolCalls[0]?.toolCallId).toMatch(/^call_[A-Za-z0-9]{24}$/);
    // name + ceil(30 argument characters / 4) pieces.
    expect(steps[0]?.usage.outputTokens).toBe(1 + 8);
    expect(steps[1]?.finishReason).toBe("stop");
    expect(text).toBe(devToolResultReply("update_memory", JSON.stringify({ saved: "colour" })));
    expect(
      text.startsWith('Dev model got tool result from update_memory: {"saved":"colour"} '),
    ).toBe(true);
    expect(stepCosts).toHaveLength(2);
    for (const step of stepCosts) expect(step.cost).toBe(step.expected);

    // The second request carried the tool result back, and the server read its tokens.
    const second = server.requests()[1]?.body as { messages: unknown[]; tools: unknown[] };
    expect(steps[1]?.usage.inputTokens).toBe(
      estimatePromptTokens(second as Parameters<typeof estimatePromptTokens>[0]),
    );
  });

  it("ignores a trigger naming a tool the request does not offer", async () => {
    const prompt = "Hi [[tool:delete_everything {}]]";
    const result = streamText({
      model: openrouter(MODEL),
      prompt,
      tools: {
        update_memory: tool({
          inputSchema: z.object({ key: z.string() }),
          execute: async () => "ok",
        }),
      },
    });
    expect(await result.text).toBe(devReply(prompt));
    expect(await result.toolCalls).toEqual([]);
  });

  it("streams reasoning as reasoning parts when the request asks for it", async () => {
    const prompt = "Why is the sky blue today?";
    const result = streamText({
      model: openrouter(MODEL, { reasoning: { effort: "low" } }),
      prompt,
    });
    const order: string[] = [];
    let reasoning = "";
    for await (const part of result.fullStream) {
      if (part.type === "reasoning-delta") reasoning += part.text;
      if (order.at(-1) !== part.type) order.push(part.type);
    }
    expect(reasoning).toBe(devReasoning(prompt));
    expect(reasoning).toBe("Thinking about: Why is the... zephyr valley clover");
    expect(await result.reasoningText).toBe(reasoning);
    expect(await result.text).toBe(devReply(prompt));
    expect(order.indexOf("reasoning-delta")).toBeLessThan(order.indexOf("text-delta"));
    const usage = await result.usage;
    expect(usage.outputTokens).toBe(8 + 24);
    expect(usage.outputTokenDetails.reasoningTokens).toBe(8);
    expect(usage.outputTokenDetails.textTokens).toBe(24);
    expect(costOf(await result.providerMetadata)).toBe(
      computeCost(MODEL, usage.inputTokens ?? -1, 32),
    );
  });

  it("streams reasoning for a [[reasoning]] trigger without the parameter", async () => {
    const prompt = "Plan my week [[reasoning]]";
    const result = streamText({ model: openrouter(MODEL), prompt });
    expect(await result.reasoningText).toBe(devReasoning(prompt));
    expect(await result.text).toBe(devReply(prompt));
  });

  it("streams the [[markdown]] document in many text deltas that join to it exactly", async () => {
    const prompt = "Show me formatting [[markdown]]";
    const result = streamText({ model: openrouter(MODEL), prompt });
    const deltas: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") deltas.push(part.text);
    }
    expect(deltas.join("")).toBe(devMarkdownReply());
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.some((delta) => delta.startsWith("\n"))).toBe(true);
    const usage = await result.usage;
    expect(usage.outputTokens).toBe(devMarkdownReply().split(/\s+/).length);
    expect(await result.finishReason).toBe("stop");
  });

  it("surfaces [[error]] as an error in the stream after some text", async () => {
    const prompt = "Tell me a story [[error]]";
    const errors: unknown[] = [];
    const result = streamText({
      model: openrouter(MODEL),
      prompt,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    let text = "";
    const parts: string[] = [];
    for await (const part of result.fullStream) {
      parts.push(part.type);
      if (part.type === "text-delta") text += part.text;
    }
    expect(text).toBe(devReply(prompt, { maxTokens: 3 }));
    expect(text).toBe("Dev model reply");
    expect(parts.indexOf("error")).toBeGreaterThan(parts.lastIndexOf("text-delta"));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({
      code: 502,
      message: "Dev model error requested by the prompt or server options",
    });
    expect(await result.finishReason).toBe("error");

    const generation = await generationOf(server.requests()[0]?.generationId ?? "");
    expect(generation).toMatchObject({ finish_reason: "error", tokens_completion: 3 });
    expect(generation.total_cost).toBe(computeCost(MODEL, generation.tokens_prompt, 3));
  });

  it("lets an AbortSignal end a [[hang]] and bills only the tokens sent", async () => {
    const prompt = "Keep going [[hang-after:4]]";
    const controller = new AbortController();
    const result = streamText({ model: openrouter(MODEL), prompt, abortSignal: controller.signal });
    let text = "";
    let deltas = 0;
    let aborted = false;
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        text += part.text;
        deltas++;
        // The server now sends nothing more: only the abort can end this stream.
        if (deltas === 4) controller.abort();
      }
      if (part.type === "abort") aborted = true;
    }
    expect(aborted).toBe(true);
    expect(text).toBe(devReply(prompt, { maxTokens: 4 }));

    const generation = await generationOf(server.requests()[0]?.generationId ?? "");
    expect(generation.cancelled).toBe(true);
    expect(generation.tokens_completion).toBe(4);
    expect(generation.finish_reason).toBeNull();
    expect(generation.total_cost).toBe(computeCost(MODEL, generation.tokens_prompt, 4));

    const response = await fetch(`${server.url}/generation?id=${generation.id}`, {
      headers: { authorization: "Bearer dev" },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { data: Generation }).data).toEqual(generation);
  });

  it("stops at maxOutputTokens with finish reason length", async () => {
    const prompt = "Write me a very long essay about rivers";
    const result = streamText({ model: openrouter(MODEL), prompt, maxOutputTokens: 5 });
    expect(await result.text).toBe(devReply(prompt, { maxTokens: 5 }));
    expect(await result.text).toBe("Dev model reply to: Write");
    expect(await result.finishReason).toBe("length");
    expect((await result.usage).outputTokens).toBe(5);
    expect(server.requests()[0]?.body).toMatchObject({ max_tokens: 5 });
  });

  it("answers [[http-error:429]] before streaming, in OpenRouter's error shape", async () => {
    const errors: unknown[] = [];
    const result = streamText({
      model: openrouter(MODEL),
      prompt: "Too fast [[http-error:429]]",
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    const error = errors[0];
    expect(APICallError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ statusCode: 429, message: "Rate limit exceeded (dev model)" });
    expect(server.requests()).toHaveLength(1);
    expect(server.generations()).toEqual([]);
  });
});

describe("generateText (non-streaming) through the provider", () => {
  it("returns the same reply as a chat.completion with usage and cost", async () => {
    const prompt = "Hello there dev model, please answer";
    const result = await generateText({ model: openrouter(MODEL), prompt });
    expect(result.text).toBe(devReply(prompt));
    expect(result.usage.inputTokens).toBe(9);
    expect(result.usage.outputTokens).toBe(24);
    expect(result.finishReason).toBe("stop");
    expect(costOf(result.providerMetadata)).toBe(computeCost(MODEL, 9, 24));
    expect(server.requests()[0]?.stream).toBe(false);
    const generation = await generationOf(server.requests()[0]?.generationId ?? "");
    expect(generation.streamed).toBe(false);
  });

  it("runs a tool loop without streaming", async () => {
    const result = await generateText({
      model: openrouter(MODEL),
      prompt: 'Save it [[tool:update_memory {"key":"k","value":"v"}]]',
      tools: {
        update_memory: tool({
          inputSchema: z.object({ key: z.string(), value: z.string() }),
          execute: async ({ key }) => `stored ${key}`,
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0]?.toolCalls[0]?.input).toEqual({ key: "k", value: "v" });
    // A string tool output travels as plain text, not JSON.
    expect(result.text).toBe(devToolResultReply("update_memory", "stored k"));
  });
});
