/**
 * The wire, byte for byte: SSE framing, error shapes, the generation endpoint and the control
 * surface, read with plain fetch.
 */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  computeCost,
  type DevModel,
  devReply,
  type Generation,
  PROCESSING_COMMENT,
  startDevModel,
} from "../src/index.ts";
import { AUTH, chatAt, choicesOf, dataOf, events } from "./sse.ts";

const MODEL = "anthropic/claude-sonnet-4.5";
const run = promisify(execFile);

let server: DevModel;

beforeAll(async () => {
  server = await startDevModel({ processingIntervalMs: 40, generationDelayMs: 0 });
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  server.reset();
});

function chat(body: Record<string, unknown>, init: RequestInit = {}): Promise<Response> {
  return chatAt(server.url, body, init);
}

describe("POST /api/v1/chat/completions, streaming", () => {
  it("frames the stream as OpenRouter does", async () => {
    const prompt = "Describe the framing of this stream";
    const messages = [{ role: "user", content: prompt }];
    const response = await chat({ model: MODEL, stream: true, messages });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const generationId = response.headers.get("x-generation-id") ?? "";
    expect(generationId).toMatch(/^gen-\d{10}-[A-Za-z0-9]{20}$/);

    const list = events(await response.text());
    expect(list[0]).toEqual({ comment: PROCESSING_COMMENT.trim() });
    expect(list.at(-1)).toEqual({ done: true });
    const chunks = dataOf(list);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: generationId,
        provider: "Parley Dev",
        model: MODEL,
        object: "chat.completion.chunk",
      });
      expect(typeof chunk.created).toBe("number");
    }
    // 24 content chunks, one finish chunk, one usage chunk.
    expect(chunks).toHaveLength(26);
    expect(chunks[0]?.choices).toEqual([
      {
        index: 0,
        delta: { role: "assistant", content: "Dev" },
        finish_reason: null,
        native_finish_reason: null,
        logprobs: null,
      },
    ]);
    const text = chunks
      .slice(0, 24)
      .map((c) => choicesOf(c)[0]?.delta.content)
      .join("");
    expect(text).toBe(devReply(prompt));
    expect(choicesOf(chunks[24] ?? {})).toEqual([
      {
        index: 0,
        delta: { role: "assistant", content: "" },
        finish_reason: "stop",
        native_finish_reason: "stop",
        logprobs: null,
      },
    ]);

    const usageChunk = chunks[25] ?? {};
    expect(usageChunk.choices).toEqual([]);
    // 35 characters -> 9 prompt tokens.
    const cost = 9 * 0.000003 + 24 * 0.000015;
    expect(usageChunk.usage).toEqual({
      prompt_tokens: 9,
      completion_tokens: 24,
      total_tokens: 33,
      cost,
      is_byok: false,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      cost_details: {
        upstream_inference_cost: null,
        upstream_inference_prompt_cost: 9 * 0.000003,
        upstream_inference_completions_cost: 24 * 0.000015,
      },
      completion_tokens_details: { reasoning_tokens: 0, image_tokens: 0 },
    });
    expect(cost).toBe(computeCost(MODEL, 9, 24));
  });

  it("keeps sending processing comments while latency runs", async () => {
    const started = Date.now();
    const response = await chat({
      stream: true,
      messages: [{ role: "user", content: "slow start [[latency:200]] [[tokens:2]]" }],
    });
    const list = events(await response.text());
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    const firstData = list.findIndex((e) => "data" in e);
    // One at once, then one per 40 ms interval that ends before the latency does.
    expect(firstData).toBe(5);
    for (const e of list.slice(0, firstData))
      expect(e).toEqual({ comment: ": OPENROUTER PROCESSING" });
  });

  it("paces tokens with [[tps:N]]", async () => {
    const started = Date.now();
    const response = await chat({
      stream: true,
      messages: [{ role: "user", content: "paced [[tps:100]] [[tokens:6]]" }],
    });
    const chunks = dataOf(events(await response.text()));
    // Six tokens at 100 per second: five 10 ms gaps.
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(chunks).toHaveLength(8);
  });

  it("sends a mid-stream error as a data event, then [DONE]", async () => {
    const prompt = "fail soon [[error-after:2]]";
    const response = await chat({
      model: MODEL,
      stream: true,
      messages: [{ role: "user", content: prompt }],
    });
    expect(response.status).toBe(200);
    const list = events(await response.text());
    const chunks = dataOf(list);
    expect(chunks).toHaveLength(3);
    expect(chunks.slice(0, 2).map((c) => choicesOf(c)[0]?.delta.content)).toEqual([
      "Dev",
      " model",
    ]);
    expect(chunks[2]).toMatchObject({
      id: response.headers.get("x-generation-id"),
      object: "chat.completion.chunk",
      error: {
        code: 502,
        message: "Dev model error requested by the prompt or server options",
        metadata: { error_type: "provider_unavailable", provider_code: "bad_gateway" },
      },
      choices: [{ index: 0, delta: { content: "" }, finish_reason: "error" }],
    });
    expect(chunks.some((c) => "usage" in c)).toBe(false);
    expect(list.at(-1)).toEqual({ done: true });
  });

  it("streams a tool call with its arguments in pieces", async () => {
    const tools = [
      { type: "function", function: { name: "update_memory", parameters: { type: "object" } } },
    ];
    const response = await chat({
      stream: true,
      tools,
      messages: [{ role: "user", content: 'note [[tool:update_memory {"key": "value"}]]' }],
    });
    const chunks = dataOf(events(await response.text()));
    const calls = chunks.flatMap((c) => choicesOf(c)[0]?.delta.tool_calls ?? []) as {
      index: number;
      id?: string;
      type?: string;
      function: { name?: string; arguments: string };
    }[];
    expect(calls[0]).toMatchObject({
      index: 0,
      type: "function",
      function: { name: "update_memory", arguments: "" },
    });
    expect(calls[0]?.id).toMatch(/^call_/);
    // Arguments are re-serialized compactly and sent 4 characters at a time.
    expect(calls.slice(1).map((c) => c.function.arguments)).toEqual([
      '{"ke',
      'y":"',
      "valu",
      'e"}',
    ]);
    expect(calls.every((c) => c.index === 0)).toBe(true);
    const finish = chunks.at(-2) ?? {};
    expect(choicesOf(finish)[0]?.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: 5 });
  });

  it("replies to a tool result with text that mentions it", async () => {
    const response = await chat({
      stream: true,
      messages: [
        { role: "user", content: 'note [[tool:update_memory {"key":"value"}]]' },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "call_1",
              type: "function",
              function: { name: "update_memory", arguments: "{}" },
            },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "memory saved" },
      ],
      tools: [{ type: "function", function: { name: "update_memory", parameters: {} } }],
    });
    const chunks = dataOf(events(await response.text()));
    const text = chunks.map((c) => choicesOf(c)[0]?.delta.content ?? "").join("");
    expect(text.startsWith("Dev model got tool result from update_memory: memory saved ")).toBe(
      true,
    );
    expect(choicesOf(chunks.at(-2) ?? {})[0]?.finish_reason).toBe("stop");
  });

  it("records a client abort as a cancelled generation billed for the tokens sent", async () => {
    const controller = new AbortController();
    const response = await chat(
      {
        model: MODEL,
        stream: true,
        messages: [{ role: "user", content: "wait [[hang-after:2]]" }],
      },
      { signal: controller.signal },
    );
    const id = response.headers.get("x-generation-id") ?? "";
    const reader = response.body?.getReader();
    let received = "";
    while (reader !== undefined && (received.match(/data: /g) ?? []).length < 2) {
      const { value } = await reader.read();
      received += new TextDecoder().decode(value);
    }
    controller.abort();
    let generation: Generation | undefined;
    for (let i = 0; i < 100 && generation === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      generation = server.generation(id);
    }
    expect(generation).toMatchObject({
      id,
      cancelled: true,
      streamed: true,
      finish_reason: null,
      tokens_completion: 2,
      native_tokens_completion: 2,
      total_cost: computeCost(MODEL, generation?.tokens_prompt ?? -1, 2),
    });
  });
});

describe("POST /api/v1/chat/completions, errors and non-streaming", () => {
  it("answers [[http-error:N]] with that status in OpenRouter's error shape", async () => {
    const response = await chat({
      stream: true,
      messages: [{ role: "user", content: "[[http-error:503]]" }],
    });
    expect(response.status).toBe(503);
    // OpenRouter may send Retry-After on 429 and 503; the dev model always does (1 s by default).
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toEqual({
      error: {
        code: 503,
        message: "Dev model HTTP error 503",
        metadata: { error_type: "provider_overloaded", retry_after_seconds: 1 },
      },
    });
    const bad = await chat({ messages: [{ role: "user", content: "[[http-error:400]]" }] });
    expect(bad.headers.get("retry-after")).toBeNull();
    expect(await bad.json()).toEqual({
      error: {
        code: 400,
        message: "Dev model HTTP error 400",
        metadata: { error_type: "invalid_request" },
      },
    });
    expect(server.requests()).toHaveLength(2);
    expect(server.generations()).toEqual([]);
  });

  it("rejects a request without a bearer token, and a wrong key when one is required", async () => {
    const open = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(open.status).toBe(401);
    expect(await open.json()).toEqual({
      error: { code: 401, message: "No auth credentials found" },
    });

    const locked = await startDevModel({ apiKey: "sk-dev" });
    try {
      const url = `${locked.url}/chat/completions`;
      const body = JSON.stringify({ messages: [{ role: "user", content: "hi" }] });
      const wrong = await fetch(url, {
        method: "POST",
        headers: { authorization: "Bearer sk-other" },
        body,
      });
      expect(wrong.status).toBe(401);
      const right = await fetch(url, {
        method: "POST",
        headers: { authorization: "Bearer sk-dev" },
        body,
      });
      expect(right.status).toBe(200);
    } finally {
      await locked.close();
    }
  });

  it("rejects malformed bodies with 400 and records them", async () => {
    const bad = await fetch(`${server.url}/chat/completions`, {
      method: "POST",
      headers: AUTH,
      body: "{not json",
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({
      error: { code: 400, message: "Invalid JSON in request body" },
    });
    const empty = await chat({ messages: [] });
    expect(empty.status).toBe(400);
    const tooMany = await chat({ messages: [{ role: "user", content: "x" }], max_tokens: 0 });
    expect(tooMany.status).toBe(400);
    expect(server.requests().map((r) => r.body)).toEqual([
      "{not json",
      { messages: [] },
      { messages: [{ role: "user", content: "x" }], max_tokens: 0 },
    ]);
  });

  it("returns a chat.completion without streaming, honouring max_completion_tokens", async () => {
    const prompt = "Short answer please";
    const response = await chat({
      model: MODEL,
      messages: [{ role: "user", content: prompt }],
      max_completion_tokens: 7,
    });
    expect(response.status).toBe(200);
    const id = response.headers.get("x-generation-id");
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({
      id,
      object: "chat.completion",
      model: MODEL,
      provider: "Parley Dev",
      choices: [
        {
          index: 0,
          finish_reason: "length",
          message: { role: "assistant", content: devReply(prompt, { maxTokens: 7 }) },
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 7, cost: computeCost(MODEL, 5, 7) },
    });
  });

  it("answers a non-streaming [[error]] with 200 and an error body", async () => {
    const response = await chat({ messages: [{ role: "user", content: "[[error]]" }] });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      error: {
        code: 502,
        message: "Dev model error requested by the prompt or server options",
        metadata: { error_type: "provider_unavailable", provider_code: "bad_gateway" },
      },
    });
  });

  it("applies a server-wide fault option when the prompt has none", async () => {
    const faulty = await startDevModel({ fault: { kind: "http-error", status: 429 } });
    try {
      const response = await fetch(`${faulty.url}/chat/completions`, {
        method: "POST",
        headers: AUTH,
        body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status).toBe(429);
      expect(response.headers.get("retry-after")).toBe("1");
      expect(await response.json()).toEqual({
        error: {
          code: 429,
          message: "Rate limit exceeded (dev model)",
          metadata: { error_type: "rate_limit_exceeded", retry_after_seconds: 1 },
        },
      });
    } finally {
      await faulty.close();
    }
  });
});

describe("GET /api/v1/generation", () => {
  it("returns the generation of a finished stream", async () => {
    const response = await chat({
      model: MODEL,
      stream: true,
      user: "user-42",
      messages: [{ role: "user", content: "Count my tokens please" }],
    });
    await response.text();
    const id = response.headers.get("x-generation-id") ?? "";
    const lookup = await fetch(`${server.url}/generation?id=${id}`, { headers: AUTH });
    expect(lookup.status).toBe(200);
    const { data } = (await lookup.json()) as { data: Generation };
    expect(data).toMatchObject({
      id,
      model: MODEL,
      streamed: true,
      cancelled: false,
      finish_reason: "stop",
      native_finish_reason: "stop",
      tokens_prompt: 6,
      tokens_completion: 24,
      native_tokens_prompt: 6,
      native_tokens_completion: 24,
      native_tokens_reasoning: 0,
      total_cost: computeCost(MODEL, 6, 24),
      usage: computeCost(MODEL, 6, 24),
      is_byok: false,
      provider_name: "Parley Dev",
      external_user: "user-42",
    });
    expect(Date.parse(data.created_at)).not.toBeNaN();
  });

  it("answers 404 in OpenRouter's error shape for an unknown id", async () => {
    const response = await fetch(`${server.url}/generation?id=gen-missing`, { headers: AUTH });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { code: 404, message: "Generation gen-missing not found" },
    });
  });

  it("keeps only the newest generations", async () => {
    const small = await startDevModel({ generationLimit: 2 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const response = await fetch(`${small.url}/chat/completions`, {
          method: "POST",
          headers: AUTH,
          body: JSON.stringify({ messages: [{ role: "user", content: `n${i}` }] }),
        });
        await response.json();
        ids.push(response.headers.get("x-generation-id") ?? "");
      }
      expect(small.generations().map((g) => g.id)).toEqual(ids.slice(1));
      const gone = await fetch(`${small.url}/generation?id=${ids[0]}`, { headers: AUTH });
      expect(gone.status).toBe(404);
    } finally {
      await small.close();
    }
  });
});

describe("GET /api/v1/models and the control surface", () => {
  it("lists the price table with prices as decimal strings", async () => {
    const response = await fetch(`${server.url}/models`);
    const { data } = (await response.json()) as {
      data: { id: string; pricing: { prompt: string; completion: string } }[];
    };
    expect(data.find((m) => m.id === "openai/gpt-4o-mini")?.pricing).toMatchObject({
      prompt: "0.00000015",
      completion: "0.0000006",
    });
    expect(data.map((m) => m.id)).toContain("parley/dev");
  });

  it("reports recorded requests and resets them over HTTP", async () => {
    await (await chat({ messages: [{ role: "user", content: "one" }] })).json();
    const base = server.url.replace(/\/api\/v1$/, "");
    const listed = (await (await fetch(`${base}/__dev/requests`)).json()) as {
      count: number;
      requests: { body: unknown; generationId: string | null }[];
    };
    expect(listed.count).toBe(1);
    expect(listed.requests[0]?.body).toEqual({ messages: [{ role: "user", content: "one" }] });
    expect(listed.requests[0]?.generationId).toMatch(/^gen-/);

    const reset = await fetch(`${base}/__dev/reset`, { method: "POST" });
    expect(await reset.json()).toEqual({ ok: true });
    expect(server.requests()).toEqual([]);
    expect(server.generations()).toEqual([]);
  });
});

describe("close()", () => {
  it("ends hanging and waiting streams and leaves no timer or socket behind", async () => {
    // A child process exits by itself only when nothing is left scheduled: a leaked latency timer
    // (20 s processing interval) or open socket would run into the 5 s limit below.
    const fixture = fileURLToPath(new URL("./fixtures/close-and-exit.ts", import.meta.url));
    const started = Date.now();
    const { stdout } = await run(process.execPath, [fixture], { timeout: 5000 });
    expect(JSON.parse(stdout)).toEqual({
      ended: ["rejected", "rejected"],
      generations: [
        [true, 0],
        [true, 1],
      ],
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
