/**
 * What OpenRouter's API reference documents and the platform prices or relies on, on the raw wire:
 * prompt-cache reads and writes, typed mid-stream errors, 429 with Retry-After, a generation
 * record that appears only after a delay, and encrypted reasoning carried across a tool loop.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  cacheDiscount,
  computeCost,
  DEFAULT_GENERATION_DELAY_MS,
  DEV_FAST_MODEL_ID,
  DEV_LARGE_MODEL_ID,
  DEV_LOCAL_MODEL_ID,
  DEV_MODEL_ID,
  type DevModel,
  devReasoning,
  devToolResultReply,
  estimatePromptTokens,
  type Generation,
  startDevModel,
} from "../src/index.ts";
import { AUTH, chatAt, choicesOf, streamedChunks } from "./sse.ts";

let server: DevModel;

beforeAll(async () => {
  server = await startDevModel({ generationDelayMs: 0, latencyMs: 0, tokensPerSecond: 0 });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
});

const chat = (body: Record<string, unknown>) => chatAt(server.url, body);

type Usage = {
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens?: number };
  cost_details: { upstream_inference_prompt_cost: number };
};

async function usageOf(response: Response): Promise<Usage> {
  return (await streamedChunks(response)).at(-1)?.usage as Usage;
}

describe("prompt caching", () => {
  const system = { role: "system", content: "You are a careful assistant. ".repeat(20) };

  it("writes the prefix on [[cache]], reads it on the next turn, and prices both", async () => {
    const first = [system, { role: "user", content: "First question [[cache]]" }];
    const one = await usageOf(
      await chat({ model: DEV_FAST_MODEL_ID, stream: true, messages: first }),
    );
    // The prefix is everything before the last message: the 580-character system prompt.
    const systemTokens = Math.floor(system.content.length / 4);
    expect(systemTokens).toBe(145);
    expect(one.prompt_tokens).toBe(estimatePromptTokens({ messages: first }));
    expect(one.prompt_tokens_details).toEqual({
      cached_tokens: 0,
      cache_write_tokens: systemTokens,
      audio_tokens: 0,
    });
    const written = { readTokens: 0, writeTokens: systemTokens };
    expect(one.cost).toBe(computeCost(DEV_FAST_MODEL_ID, one.prompt_tokens, 24, written));
    expect(one.cost).toBe(
      (one.prompt_tokens - systemTokens) * 0.0000001 + systemTokens * 0.000000125 + 24 * 0.0000004,
    );

    const second = [
      ...first,
      { role: "assistant", content: "An answer." },
      { role: "user", content: "Second question [[cache]]" },
    ];
    const response = await chat({ model: DEV_FAST_MODEL_ID, stream: true, messages: second });
    const id = response.headers.get("x-generation-id") ?? "";
    const two = await usageOf(response);
    const prefixTokens = Math.floor(
      (system.content.length + "First question [[cache]]".length + "An answer.".length) / 4,
    );
    expect(two.prompt_tokens_details).toEqual({
      cached_tokens: systemTokens,
      cache_write_tokens: prefixTokens - systemTokens,
      audio_tokens: 0,
    });
    const both = { readTokens: systemTokens, writeTokens: prefixTokens - systemTokens };
    expect(two.cost).toBe(computeCost(DEV_FAST_MODEL_ID, two.prompt_tokens, 24, both));
    expect(two.cost_details.upstream_inference_prompt_cost).toBe(
      (two.prompt_tokens - prefixTokens) * 0.0000001 +
        systemTokens * 0.000000025 +
        (prefixTokens - systemTokens) * 0.000000125,
    );
    // The generation record agrees: cached tokens, and what the cache saved (or cost) over the prompt rate.
    expect(server.generation(id)).toMatchObject({
      native_tokens_cached: systemTokens,
      total_cost: two.cost,
      cache_discount: cacheDiscount(DEV_FAST_MODEL_ID, both),
    });

    // The same request again reads its whole prefix and writes nothing.
    const again = await usageOf(
      await chat({ model: DEV_FAST_MODEL_ID, stream: true, messages: second }),
    );
    expect(again.prompt_tokens_details).toMatchObject({
      cached_tokens: prefixTokens,
      cache_write_tokens: 0,
    });
  });

  it("caches without asking once the prefix reaches 1024 tokens, and on cache_control", async () => {
    const long = { role: "system", content: "x".repeat(4096) };
    const short = [system, { role: "user", content: "no trigger" }];
    const plain = await usageOf(
      await chat({ model: DEV_LARGE_MODEL_ID, stream: true, messages: short }),
    );
    expect(plain.prompt_tokens_details).toMatchObject({ cached_tokens: 0, cache_write_tokens: 0 });

    const auto = [long, { role: "user", content: "a long system prompt" }];
    const one = await usageOf(
      await chat({ model: DEV_LARGE_MODEL_ID, stream: true, messages: auto }),
    );
    expect(one.prompt_tokens_details).toMatchObject({ cached_tokens: 0, cache_write_tokens: 1024 });
    const two = await usageOf(
      await chat({ model: DEV_LARGE_MODEL_ID, stream: true, messages: auto }),
    );
    expect(two.prompt_tokens_details).toMatchObject({ cached_tokens: 1024, cache_write_tokens: 0 });
    expect(two.cost).toBeLessThan(one.cost);

    // Anthropic-style automatic caching: one cache_control at the top of the request.
    const marked = await usageOf(
      await chat({
        model: DEV_LARGE_MODEL_ID,
        stream: true,
        cache_control: { type: "ephemeral" },
        messages: short,
      }),
    );
    expect(marked.prompt_tokens_details).toMatchObject({ cache_write_tokens: 145 });
    // Caches are per model.
    const other = await usageOf(
      await chat({ model: DEV_FAST_MODEL_ID, stream: true, messages: auto }),
    );
    expect(other.prompt_tokens_details).toMatchObject({
      cached_tokens: 0,
      cache_write_tokens: 1024,
    });
  });

  it("forgets entries after their TTL and on reset", async () => {
    const brief = await startDevModel({
      tokensPerSecond: 0,
      latencyMs: 0,
      promptCache: { ttlMs: 200 },
    });
    try {
      const messages = [system, { role: "user", content: "q [[cache]]" }];
      const run = async () =>
        usageOf(await chatAt(brief.url, { model: DEV_FAST_MODEL_ID, stream: true, messages }));
      expect((await run()).prompt_tokens_details.cache_write_tokens).toBe(145);
      expect((await run()).prompt_tokens_details.cached_tokens).toBe(145);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await run()).prompt_tokens_details.cached_tokens).toBe(0);
      brief.reset();
      expect((await run()).prompt_tokens_details.cached_tokens).toBe(0);
    } finally {
      await brief.close();
    }
  });
});

describe("typed mid-stream errors", () => {
  it("sends error.metadata.error_type as OpenRouter documents it", async () => {
    const response = await chat({
      model: DEV_FAST_MODEL_ID,
      stream: true,
      messages: [{ role: "user", content: "go [[error:provider_overloaded]] [[error-after:2]]" }],
    });
    expect(response.status).toBe(200);
    const chunks = await streamedChunks(response);
    expect(chunks).toHaveLength(3);
    expect(chunks[2]).toEqual({
      id: response.headers.get("x-generation-id"),
      provider: "Parley Dev",
      model: DEV_FAST_MODEL_ID,
      object: "chat.completion.chunk",
      created: chunks[0]?.created,
      error: {
        code: 503,
        message: "Provider is temporarily overloaded (dev model)",
        metadata: { error_type: "provider_overloaded", provider_code: "overloaded_error" },
      },
      choices: [
        {
          index: 0,
          delta: { role: "assistant", content: "" },
          finish_reason: "error",
          native_finish_reason: "error",
          logprobs: null,
        },
      ],
    });
  });

  it("covers a content filter and masks a 500, and speaks OpenAI's shape on the local wire", async () => {
    const filtered = await streamedChunks(
      await chat({
        stream: true,
        messages: [{ role: "user", content: "[[error:content_policy_violation]]" }],
      }),
    );
    expect(filtered.at(-1)?.error).toEqual({
      code: 400,
      message: "The output was flagged by a content filter (dev model)",
      metadata: { error_type: "content_policy_violation", provider_code: "content_filter" },
    });
    const masked = await streamedChunks(
      await chat({ stream: true, messages: [{ role: "user", content: "[[error:server]]" }] }),
    );
    expect(masked.at(-1)?.error).toEqual({
      code: 500,
      message: "Internal Server Error",
      metadata: { error_type: "server" },
    });
    const local = await streamedChunks(
      await chat({
        model: DEV_LOCAL_MODEL_ID,
        stream: true,
        messages: [{ role: "user", content: "[[error:provider_overloaded]]" }],
      }),
    );
    expect(local.at(-1)).toEqual({
      error: {
        message: "Provider is temporarily overloaded (dev model)",
        type: "server_error",
        param: null,
        code: null,
      },
    });
    // An unknown type is no trigger: it stays in the text.
    const plain = await streamedChunks(
      await chat({ stream: true, messages: [{ role: "user", content: "[[error:nope]]" }] }),
    );
    expect(plain.some((c) => "error" in c)).toBe(false);
  });
});

describe("429 with Retry-After", () => {
  it("answers [[http-error:429]] with the header and a typed body; [[retry-after:N]] sets it", async () => {
    const response = await chat({
      model: DEV_MODEL_ID,
      stream: true,
      messages: [{ role: "user", content: "slow down [[http-error:429]] [[retry-after:7]]" }],
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("7");
    expect(response.headers.get("x-generation-id")).toBeNull();
    expect(await response.json()).toEqual({
      error: {
        code: 429,
        message: "Rate limit exceeded (dev model)",
        metadata: { error_type: "rate_limit_exceeded", retry_after_seconds: 7 },
      },
    });
    expect(server.generations()).toEqual([]);
  });

  it("rate-limits each API key to the configured requests per window", async () => {
    const limited = await startDevModel({ rateLimit: { requests: 2, windowMs: 60_000 } });
    try {
      const call = (key: string) =>
        fetch(`${limited.url}/chat/completions`, {
          method: "POST",
          headers: { ...AUTH, authorization: `Bearer ${key}` },
          body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
        });
      expect((await call("a")).status).toBe(200);
      expect((await call("a")).status).toBe(200);
      const third = await call("a");
      expect(third.status).toBe(429);
      const wait = Number(third.headers.get("retry-after"));
      expect(wait).toBeGreaterThanOrEqual(59);
      expect(wait).toBeLessThanOrEqual(60);
      expect(((await third.json()) as { error: { metadata: unknown } }).error.metadata).toEqual({
        error_type: "rate_limit_exceeded",
        retry_after_seconds: wait,
      });
      expect((await call("b")).status).toBe(200);
      expect(limited.generations()).toHaveLength(3);
    } finally {
      await limited.close();
    }
  });
});

describe("a generation record that appears after a delay", () => {
  it("answers 404 until the delay has passed, then the record; the control surface sees it at once", async () => {
    expect(DEFAULT_GENERATION_DELAY_MS).toBe(500);
    const delayed = await startDevModel();
    try {
      const response = await chatAt(delayed.url, {
        stream: true,
        messages: [{ role: "user", content: "stop here [[hang-after:2]]" }],
      });
      const id = response.headers.get("x-generation-id") ?? "";
      const reader = response.body?.getReader();
      let seen = "";
      while (reader !== undefined && (seen.match(/data: /g) ?? []).length < 2) {
        seen += new TextDecoder().decode((await reader.read()).value);
      }
      await reader?.cancel();
      let recorded: Generation | undefined;
      for (let i = 0; i < 100 && recorded === undefined; i++) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        recorded = delayed.generation(id);
      }
      const endedAt = Date.now();
      expect(recorded).toMatchObject({ cancelled: true, tokens_completion: 2 });
      const lookup = () =>
        fetch(`${delayed.url}/generation?id=${id}`, { headers: { authorization: "Bearer dev" } });
      const early = await lookup();
      expect(early.status).toBe(404);
      expect(await early.json()).toEqual({
        error: { code: 404, message: `Generation ${id} not found` },
      });
      const base = delayed.url.replace(/\/api\/v1$/, "");
      const control = (await (await fetch(`${base}/__dev/generations`)).json()) as {
        data: Generation[];
      };
      expect(control.data.map((g) => g.id)).toEqual([id]);

      let found: Response | undefined;
      while (found === undefined && Date.now() - endedAt < 2000) {
        const attempt = await lookup();
        if (attempt.status === 200) found = attempt;
        else await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(Date.now() - endedAt).toBeGreaterThanOrEqual(DEFAULT_GENERATION_DELAY_MS - 30);
      expect(found?.status).toBe(200);
      expect(((await found?.json()) as { data?: Generation } | undefined)?.data).toEqual(recorded);
    } finally {
      await delayed.close();
    }
  });
});

describe("encrypted reasoning across a tool loop", () => {
  const tools = [{ type: "function", function: { name: "lookup", parameters: {} } }];
  const prompt = 'Check the records [[tool:lookup {"q":"a"}]]';

  async function toolStep(model: string, content: string) {
    const response = await chat({
      model,
      stream: true,
      tools,
      reasoning: { effort: "high" },
      messages: [{ role: "user", content }],
    });
    const chunks = await streamedChunks(response);
    const deltas = chunks.flatMap((c) =>
      (c.choices as unknown[]).length > 0 ? [choicesOf(c)[0]?.delta] : [],
    );
    const details = deltas.flatMap((d) => d?.reasoning_details ?? []);
    const call = deltas
      .flatMap((d) => (d?.tool_calls ?? []) as { id?: string }[])
      .find((c) => c.id);
    return { chunks, deltas, details, callId: call?.id ?? "" };
  }

  it("sends a reasoning.encrypted detail on the large model's tool-call step, before the call", async () => {
    const { deltas, details } = await toolStep(DEV_LARGE_MODEL_ID, prompt);
    const encrypted = details.filter((d) => d.type === "reasoning.encrypted");
    expect(encrypted).toHaveLength(1);
    expect(encrypted[0]).toEqual({
      type: "reasoning.encrypted",
      id: expect.stringMatching(/^rs_[0-9a-f]{24}$/),
      data: expect.stringMatching(/^[A-Za-z0-9+/]{64}$/),
      format: "openai-responses-v1",
      index: 1,
    });
    const at = deltas.findIndex((d) => d?.reasoning_details?.[0]?.type === "reasoning.encrypted");
    const firstCall = deltas.findIndex((d) => (d?.tool_calls?.length ?? 0) > 0);
    const lastReasoning = deltas.findLastIndex((d) => typeof d?.reasoning === "string");
    expect(at).toBeGreaterThan(lastReasoning);
    expect(at).toBe(firstCall - 1);
    expect(deltas.flatMap((d) => d?.reasoning ?? []).join("")).toBe(devReasoning(prompt));
    // The models without it, and a step without a tool call, send none.
    expect(
      (await toolStep(DEV_MODEL_ID, prompt)).details.some((d) => d.type === "reasoning.encrypted"),
    ).toBe(false);
    expect(
      (await toolStep(DEV_LARGE_MODEL_ID, "just think")).details.some(
        (d) => d.type === "reasoning.encrypted",
      ),
    ).toBe(false);
  });

  it("refuses the next step when the detail was dropped or altered, and answers when it came back", async () => {
    const step = await toolStep(DEV_LARGE_MODEL_ID, prompt);
    const encrypted = step.details.find((d) => d.type === "reasoning.encrypted");
    const next = (reasoning_details: unknown) =>
      chat({
        model: DEV_LARGE_MODEL_ID,
        stream: true,
        tools,
        reasoning: { effort: "high" },
        messages: [
          { role: "user", content: prompt },
          {
            role: "assistant",
            content: null,
            tool_calls: [
              {
                id: step.callId,
                type: "function",
                function: { name: "lookup", arguments: '{"q":"a"}' },
              },
            ],
            ...(reasoning_details === undefined ? {} : { reasoning_details }),
          },
          { role: "tool", tool_call_id: step.callId, content: "one record" },
        ],
      });
    for (const lost of [undefined, [], [{ ...encrypted, data: "tampered" }]]) {
      const refused = await next(lost);
      expect(refused.status).toBe(400);
      const body = (await refused.json()) as { error: Record<string, unknown> };
      expect(body.error).toMatchObject({ code: 400, metadata: { error_type: "invalid_prompt" } });
      expect(body.error.message).toContain(step.callId);
    }
    const answered = await next(step.details);
    expect(answered.status).toBe(200);
    const text = (await streamedChunks(answered))
      .map((c) =>
        (c.choices as unknown[]).length > 0 ? (choicesOf(c)[0]?.delta.content ?? "") : "",
      )
      .join("");
    expect(text).toBe(devToolResultReply("lookup", "one record"));
  });

  it("does the same on any reasoning model with [[reasoning:encrypted]], checking only the current loop", async () => {
    const content = `${prompt} [[reasoning:encrypted]]`;
    const step = await toolStep(DEV_MODEL_ID, content);
    expect(step.details.filter((d) => d.type === "reasoning.encrypted")).toHaveLength(1);
    const history = [
      { role: "user", content },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: step.callId, type: "function", function: { name: "lookup", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: step.callId, content: "done" },
    ];
    expect((await chat({ model: DEV_MODEL_ID, tools, messages: history })).status).toBe(400);
    // A later turn may leave an earlier loop's reasoning behind, as providers drop it themselves.
    const later = await chat({
      model: DEV_MODEL_ID,
      tools,
      messages: [
        ...history,
        { role: "assistant", content: "ok" },
        { role: "user", content: "next" },
      ],
    });
    expect(later.status).toBe(200);
  });
});
