/**
 * The dev models on the wire: the `/models` list in OpenRouter's published shape, each model's
 * price and pace, and the OpenAI-compatible wire of the model that reports no cost.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  computeCost,
  DEV_FAST_MODEL_ID,
  DEV_LARGE_MODEL_ID,
  DEV_LOCAL_MODEL_ID,
  DEV_MODEL_ID,
  DEV_MODELS,
  type DevModel,
  devReply,
  devToolResultReply,
  listedModels,
  PRICES,
  startDevModel,
} from "../src/index.ts";
import { chatAt, choicesOf, dataOf, events, streamedChunks } from "./sse.ts";

let server: DevModel;

beforeAll(async () => {
  server = await startDevModel({ processingIntervalMs: 100, generationDelayMs: 0 });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
});

const chat = (body: Record<string, unknown>, init: RequestInit = {}) =>
  chatAt(server.url, body, init);

describe("GET /api/v1/models", () => {
  it("lists every dev model in OpenRouter's published shape, prices as decimal strings", async () => {
    const response = await fetch(`${server.url}/models`);
    expect(response.status).toBe(200);
    const { data } = (await response.json()) as { data: Record<string, unknown>[] };
    expect(data).toEqual(listedModels());
    for (const model of data) {
      expect(Object.keys(model).sort()).toEqual([
        "architecture",
        "canonical_slug",
        "context_length",
        "created",
        "default_parameters",
        "description",
        "hugging_face_id",
        "id",
        "name",
        "per_request_limits",
        "pricing",
        "supported_parameters",
        "top_provider",
      ]);
      const pricing = model.pricing as Record<string, string>;
      expect(Object.keys(pricing).sort()).toEqual([
        "completion",
        "image",
        "input_cache_read",
        "input_cache_write",
        "internal_reasoning",
        "prompt",
        "request",
        "web_search",
      ]);
      for (const price of Object.values(pricing)) expect(price).toMatch(/^\d+(\.\d+)?$/);
      expect(Object.keys(model.top_provider as object).sort()).toEqual([
        "context_length",
        "is_moderated",
        "max_completion_tokens",
      ]);
    }
    const ids = data.map((m) => m.id);
    expect(ids).toEqual(expect.arrayContaining(DEV_MODELS.map((m) => m.id)));
    expect(DEV_MODELS.map((m) => m.id)).toEqual([
      DEV_MODEL_ID,
      DEV_FAST_MODEL_ID,
      DEV_LARGE_MODEL_ID,
      DEV_LOCAL_MODEL_ID,
    ]);
    expect(data.find((m) => m.id === DEV_LARGE_MODEL_ID)).toMatchObject({
      name: "Parley Dev Large",
      context_length: 200_000,
      pricing: {
        prompt: "0.000003",
        completion: "0.000015",
        input_cache_read: "0.0000003",
        input_cache_write: "0.00000375",
      },
      top_provider: { max_completion_tokens: 64_000 },
      supported_parameters: [
        "include_reasoning",
        "max_tokens",
        "reasoning",
        "tool_choice",
        "tools",
      ],
    });
    expect(data.find((m) => m.id === DEV_FAST_MODEL_ID)?.supported_parameters).toEqual([
      "max_tokens",
      "tool_choice",
      "tools",
    ]);
    // The price the server charges is the listed one, read from its decimal string.
    expect(PRICES[DEV_FAST_MODEL_ID]).toMatchObject({
      prompt: 0.0000001,
      completion: 0.0000004,
      cacheRead: 0.000000025,
      cacheWrite: 0.000000125,
    });
  });

  it("says which models report cost and which speak the plain OpenAI wire", () => {
    expect(DEV_MODELS.map((m) => [m.id, m.api, m.reportsCost, m.reasoning, m.promptCache])).toEqual(
      [
        [DEV_MODEL_ID, "openrouter", true, true, false],
        [DEV_FAST_MODEL_ID, "openrouter", true, false, true],
        [DEV_LARGE_MODEL_ID, "openrouter", true, true, true],
        [DEV_LOCAL_MODEL_ID, "openai-compatible", false, false, false],
      ],
    );
  });
});

describe("the dev models' prices and paces", () => {
  it("keeps parley/dev instant, at $1 / $2 per million tokens, with today's usage shape", async () => {
    const started = Date.now();
    const response = await chat({
      model: DEV_MODEL_ID,
      stream: true,
      messages: [{ role: "user", content: "The usual please [[cache]]" }],
    });
    const chunks = await streamedChunks(response);
    expect(Date.now() - started).toBeLessThan(500);
    // 26 characters: 7 prompt tokens. No prompt cache: the trigger changes nothing.
    expect(chunks.at(-1)?.usage).toEqual({
      prompt_tokens: 7,
      completion_tokens: 24,
      total_tokens: 31,
      cost: 7 * 0.000001 + 24 * 0.000002,
      is_byok: false,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      cost_details: {
        upstream_inference_cost: null,
        upstream_inference_prompt_cost: 7 * 0.000001,
        upstream_inference_completions_cost: 24 * 0.000002,
      },
      completion_tokens_details: { reasoning_tokens: 0, image_tokens: 0 },
    });
  });

  it("paces the large model slower than the fast one, each at its own price", async () => {
    const timed = async (model: string) => {
      const started = Date.now();
      const response = await chat({
        model,
        stream: true,
        messages: [{ role: "user", content: "How fast are you" }],
      });
      const list = events(await response.text());
      return { ms: Date.now() - started, list, chunks: dataOf(list) };
    };
    const fast = await timed(DEV_FAST_MODEL_ID);
    const large = await timed(DEV_LARGE_MODEL_ID);
    // Large: 300 ms before the first token, then 80 tokens a second (23 gaps of 12.5 ms).
    expect(large.ms).toBeGreaterThanOrEqual(300 + 23 * 12.5 - 5);
    // Fast: 50 ms, then 250 tokens a second (23 gaps of 4 ms).
    expect(fast.ms).toBeGreaterThanOrEqual(50 + 23 * 4 - 5);
    expect(fast.ms).toBeLessThan(large.ms);
    // The large model's wait is filled with processing comments, as OpenRouter does.
    expect(large.list.filter((e) => "comment" in e).length).toBeGreaterThanOrEqual(3);
    for (const [model, run] of [
      [DEV_FAST_MODEL_ID, fast],
      [DEV_LARGE_MODEL_ID, large],
    ] as const) {
      expect(run.chunks.at(-1)?.usage).toMatchObject({
        prompt_tokens: 4,
        completion_tokens: 24,
        cost: computeCost(model, 4, 24),
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      });
    }
    expect(computeCost(DEV_LARGE_MODEL_ID, 4, 24)).toBeGreaterThan(
      computeCost(DEV_FAST_MODEL_ID, 4, 24) * 30,
    );
  });

  it("lets the server's own pace override every model's", async () => {
    const instant = await startDevModel({ latencyMs: 0, tokensPerSecond: 0 });
    try {
      const started = Date.now();
      const response = await chatAt(instant.url, {
        model: DEV_LARGE_MODEL_ID,
        stream: true,
        messages: [{ role: "user", content: "quick" }],
      });
      await response.text();
      expect(Date.now() - started).toBeLessThan(250);
    } finally {
      await instant.close();
    }
  });
});

describe("parley/dev-local: a plain OpenAI-compatible server that reports no cost", () => {
  it("streams OpenAI chunks: no generation id, processing comment, provider or cost", async () => {
    const prompt = "Local answer please";
    const response = await chat({
      model: DEV_LOCAL_MODEL_ID,
      stream: true,
      messages: [{ role: "user", content: prompt }],
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-generation-id")).toBeNull();
    const list = events(await response.text());
    expect(list.some((e) => "comment" in e)).toBe(false);
    const chunks = dataOf(list);
    // 24 words and the finish chunk; no usage chunk unless stream_options asks for it.
    expect(chunks).toHaveLength(25);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        object: "chat.completion.chunk",
        model: DEV_LOCAL_MODEL_ID,
        system_fingerprint: "parley-dev-local",
      });
      expect(chunk.id).toMatch(/^chatcmpl-[A-Za-z0-9]{24}$/);
      expect(chunk).not.toHaveProperty("provider");
      expect(chunk).not.toHaveProperty("usage");
    }
    expect(
      chunks
        .slice(0, 24)
        .map((c) => choicesOf(c)[0]?.delta.content)
        .join(""),
    ).toBe(devReply(prompt));
    expect(chunks[24]?.choices).toEqual([
      { index: 0, delta: {}, logprobs: null, finish_reason: "stop" },
    ]);
    // No generation record: a lookup by the completion id finds nothing, ever.
    const id = String(chunks[0]?.id);
    expect(server.requests()[0]?.generationId).toBe(id);
    expect(server.generations()).toEqual([]);
    const lookup = await fetch(`${server.url}/generation?id=${id}`, {
      headers: { authorization: "Bearer dev" },
    });
    expect(lookup.status).toBe(404);
  });

  it("ends with a usage chunk of tokens only when stream_options.include_usage asks", async () => {
    const response = await chat({
      model: DEV_LOCAL_MODEL_ID,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "Count it" }],
    });
    const chunks = await streamedChunks(response);
    expect(chunks).toHaveLength(26);
    expect(chunks[25]).toMatchObject({ choices: [] });
    expect(chunks[25]?.usage).toEqual({
      prompt_tokens: 2,
      completion_tokens: 24,
      total_tokens: 26,
    });
  });

  it("takes calls without a key, answers JSON without cost, and tool calls as OpenAI does", async () => {
    const tools = [{ type: "function", function: { name: "lookup", parameters: {} } }];
    const keyless = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: DEV_LOCAL_MODEL_ID,
        tools,
        messages: [{ role: "user", content: 'find it [[tool:lookup {"q":"x"}]]' }],
      }),
    });
    expect(keyless.status).toBe(200);
    expect(keyless.headers.get("x-generation-id")).toBeNull();
    const body = (await keyless.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      object: "chat.completion",
      model: DEV_LOCAL_MODEL_ID,
      choices: [
        {
          index: 0,
          finish_reason: "tool_calls",
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              { type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
            ],
          },
        },
      ],
      // One token for the name, three for the arguments' 9 characters.
      usage: { completion_tokens: 4 },
    });
    expect(body).not.toHaveProperty("provider");
    expect(Object.keys(body.usage as object).sort()).toEqual([
      "completion_tokens",
      "prompt_tokens",
      "total_tokens",
    ]);
    // An OpenRouter model still needs a key.
    const refused = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ model: DEV_MODEL_ID, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(refused.status).toBe(401);

    const afterTool = await chat({
      model: DEV_LOCAL_MODEL_ID,
      tools,
      messages: [
        { role: "user", content: "find it" },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "lookup", arguments: "{}" } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "found" },
      ],
    });
    const answer = (await afterTool.json()) as { choices: { message: { content: string } }[] };
    expect(answer.choices[0]?.message.content).toBe(devToolResultReply("lookup", "found"));
  });

  it("ignores reasoning, which this model does not do", async () => {
    const response = await chat({
      model: DEV_LOCAL_MODEL_ID,
      reasoning: { effort: "high" },
      messages: [{ role: "user", content: "think [[reasoning]]" }],
    });
    const body = (await response.json()) as {
      choices: { message: Record<string, unknown> }[];
      usage: { completion_tokens: number };
    };
    expect(body.choices[0]?.message).not.toHaveProperty("reasoning");
    expect(body.usage.completion_tokens).toBe(24);
  });
});
