import type { UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import {
  applyChunk,
  LightChat,
  newTurn,
  type SocketLike,
  type StreamChunk,
  socketScheme,
} from "./light-chat.ts";

const counter = () => {
  let n = 0;
  return () => `id${++n}`;
};

/** Feeds chunks through the reducer from a transcript. */
function reduce(chunks: StreamChunk[], messages: UIMessage[] = [], continuation = false) {
  const turn = newTurn(continuation);
  let list = messages;
  for (const chunk of chunks) list = applyChunk(list, turn, chunk, counter());
  return { list, turn };
}

const textReply = (id: string, text: string): StreamChunk[] => [
  { type: "start", messageId: id, messageMetadata: { turnId: "t1" } },
  { type: "start-step" },
  { type: "text-start", id: "a" },
  ...text
    .split(" ")
    .map((word, i) => ({ type: "text-delta", id: "a", delta: i ? ` ${word}` : word })),
  { type: "text-end", id: "a" },
  { type: "finish-step" },
  { type: "finish", messageMetadata: { usage: { totalTokens: 15 } } },
];

describe("applyChunk", () => {
  it("builds a reply's text, steps and merged metadata", () => {
    const { list } = reduce(textReply("r1", "Hello there friend"));
    expect(list).toEqual([
      {
        id: "r1",
        role: "assistant",
        metadata: { turnId: "t1", usage: { totalTokens: 15 } },
        parts: [
          { type: "step-start" },
          { type: "text", text: "Hello there friend", state: "done" },
        ],
      },
    ]);
  });

  it("keeps text streaming until its end, and reasoning apart", () => {
    const { list } = reduce([
      { type: "start", messageId: "r1" },
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "Thinking" },
      { type: "reasoning-end", id: "r" },
      { type: "text-start", id: "a" },
      { type: "text-delta", id: "a", delta: "Par" },
    ]);
    expect(list[0]?.parts).toEqual([
      { type: "reasoning", text: "Thinking", state: "done" },
      { type: "text", text: "Par", state: "streaming" },
    ]);
  });

  it("follows a tool call through input, approval and output", () => {
    const start: StreamChunk[] = [
      { type: "start", messageId: "r1" },
      { type: "tool-input-start", toolCallId: "c1", toolName: "remember" },
      { type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '{"fact":' },
    ];
    let { list, turn } = reduce(start);
    expect(list[0]?.parts).toEqual([
      { type: "tool-remember", toolCallId: "c1", state: "input-streaming", input: undefined },
    ]);
    const more = (chunk: StreamChunk) => {
      list = applyChunk(list, turn, chunk);
      return list[0]?.parts[0];
    };
    expect(
      more({ type: "tool-input-delta", toolCallId: "c1", inputTextDelta: '"tea"}' }),
    ).toMatchObject({
      input: { fact: "tea" },
    });
    expect(
      more({
        type: "tool-input-available",
        toolCallId: "c1",
        toolName: "remember",
        input: { fact: "tea" },
      }),
    ).toMatchObject({ state: "input-available", input: { fact: "tea" } });
    expect(
      more({ type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" }),
    ).toMatchObject({
      state: "approval-requested",
      approval: { id: "ap1" },
    });
    expect(more({ type: "tool-output-available", toolCallId: "c1", output: { ok: true } })).toEqual(
      {
        type: "tool-remember",
        toolCallId: "c1",
        state: "output-available",
        input: { fact: "tea" },
        output: { ok: true },
        approval: { id: "ap1" },
      },
    );
    ({ list, turn } = reduce([
      { type: "start", messageId: "r2" },
      { type: "tool-input-available", toolCallId: "c2", toolName: "x", input: {}, dynamic: true },
      { type: "tool-output-error", toolCallId: "c2", errorText: "boom" },
    ]));
    expect(list[0]?.parts[0]).toMatchObject({
      type: "dynamic-tool",
      toolName: "x",
      state: "output-error",
      errorText: "boom",
    });
    expect(more({ type: "tool-output-denied", toolCallId: "c2" })).toMatchObject({
      state: "output-denied",
    });
  });

  it("keeps a tool source's name on its call's part through approval and output", () => {
    const toolMetadata = { source: "Shop", sourceId: "tsrc_1" };
    const { list } = reduce([
      { type: "start", messageId: "r1" },
      {
        type: "tool-input-available",
        toolCallId: "c1",
        toolName: "request_refund",
        input: { orderId: "A-1" },
        toolMetadata,
      },
      { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" },
    ]);
    expect(list[0]?.parts[0]).toMatchObject({ state: "approval-requested", toolMetadata });
  });

  it("keeps data parts (replaced by id), drops transient ones, and records an error chunk", () => {
    const { list, turn } = reduce([
      { type: "start", messageId: "r1" },
      { type: "data-progress", id: "p", data: 1 },
      { type: "data-progress", id: "p", data: 2 },
      { type: "data-note", data: "x", transient: true },
      { type: "error", errorText: "Model failed" },
    ]);
    expect(list[0]?.parts).toEqual([{ type: "data-progress", id: "p", data: 2 }]);
    expect(turn.errorText).toBe("Model failed");
  });

  it("rebuilds a replayed reply instead of doubling it", () => {
    const first = reduce(textReply("r1", "one two").slice(0, 4)).list;
    // A new socket replays the stream from its start, under a new turn state.
    const { list } = reduce(textReply("r1", "one two three"), first);
    expect(list).toHaveLength(1);
    expect(list[0]?.parts).toEqual([
      { type: "step-start" },
      { type: "text", text: "one two three", state: "done" },
    ]);
  });

  it("a continuation extends the last reply, and its replay does not double", () => {
    const base = reduce(textReply("r1", "Saving")).list;
    const turn = newTurn(true);
    let list = base;
    const continuation: StreamChunk[] = [
      { type: "start", messageId: "r1" },
      { type: "text-start", id: "b" },
      { type: "text-delta", id: "b", delta: "Saved." },
      { type: "text-end", id: "b" },
    ];
    for (const chunk of continuation) list = applyChunk(list, turn, chunk);
    for (const chunk of continuation) list = applyChunk(list, turn, chunk); // replayed
    expect(list[0]?.parts.map((part) => (part.type === "text" ? part.text : part.type))).toEqual([
      "step-start",
      "Saving",
      "Saved.",
    ]);
  });
});

describe("socketScheme", () => {
  it("is ws only for local and private hosts", () => {
    expect(socketScheme("localhost:8787")).toBe("ws");
    expect(socketScheme("127.0.0.1:8797")).toBe("ws");
    expect(socketScheme("192.168.1.4")).toBe("ws");
    expect(socketScheme("parley.example")).toBe("wss");
    expect(socketScheme("172.40.0.1")).toBe("wss");
  });
});

class FakeSocket implements SocketLike {
  readyState = 0;
  sent: Record<string, unknown>[] = [];
  closed = false;
  #listeners = new Map<string, ((event: never) => void)[]>();
  constructor(readonly url: string) {}
  addEventListener(type: string, listener: (event: never) => void) {
    this.#listeners.set(type, [...(this.#listeners.get(type) ?? []), listener]);
  }
  #emit(type: string, event: unknown) {
    for (const listener of this.#listeners.get(type) ?? []) listener(event as never);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }
  close() {
    this.closed = true;
  }
  open() {
    this.readyState = 1;
    this.#emit("open", {});
  }
  drop(code = 1006) {
    this.readyState = 3;
    this.#emit("close", { code });
  }
  frame(frame: Record<string, unknown>) {
    this.#emit("message", { data: JSON.stringify(frame) });
  }
  chunk(id: string, chunk: StreamChunk | null, extra: Record<string, unknown> = {}) {
    this.frame({
      type: "cf_agent_use_chat_response",
      id,
      body: chunk ? JSON.stringify(chunk) : "",
      done: false,
      ...extra,
    });
  }
  done(id: string, extra: Record<string, unknown> = {}) {
    this.frame({ type: "cf_agent_use_chat_response", id, body: "", done: true, ...extra });
  }
  ofType(type: string) {
    return this.sent.filter((frame) => frame.type === type);
  }
}

const tick = () => new Promise((resolve) => setTimeout(resolve, 0));

async function harness(transcript: UIMessage[] = [], host = "parley.example") {
  const sockets: FakeSocket[] = [];
  let tickets = 0;
  let loads = 0;
  let serverTranscript = transcript;
  const chat = new LightChat({
    agent: "assistant-agent",
    name: "ses_1",
    host,
    connectTicket: async () => `ct_${++tickets}`,
    loadMessages: async () => {
      loads += 1;
      return serverTranscript;
    },
    openSocket: (url) => {
      const socket = new FakeSocket(url);
      sockets.push(socket);
      return socket;
    },
    reconnectDelay: () => 0,
    makeId: counter(),
  });
  chat.start();
  await tick();
  await tick();
  const socket = () => sockets.at(-1) as FakeSocket;
  socket().open();
  return {
    chat,
    sockets,
    socket,
    loads: () => loads,
    setTranscript: (messages: UIMessage[]) => {
      serverTranscript = messages;
    },
    state: () => chat.getSnapshot(),
    /** Streams a reply's chunks to request `id` on the current socket. */
    stream: (id: string, chunks: StreamChunk[], extra: Record<string, unknown> = {}) => {
      for (const chunk of chunks) socket().chunk(id, chunk, extra);
    },
  };
}

const requestOf = (frame: Record<string, unknown>) =>
  JSON.parse((frame.init as { body: string }).body) as { messages: UIMessage[]; trigger: string };

const user = (id: string, text: string): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

const reply = (id: string, text: string): UIMessage => ({
  id,
  role: "assistant",
  parts: [{ type: "text", text, state: "done" }],
});

describe("LightChat", () => {
  it("loads the transcript, then opens the socket with a ticket and asks about a live stream", async () => {
    const h = await harness([user("m0", "Hi")]);
    expect(h.state().phase).toBe("ready");
    expect(h.state().messages).toHaveLength(1);
    expect(h.socket().url).toBe("wss://parley.example/agents/assistant-agent/ses_1?ticket=ct_1");
    expect(h.socket().sent.map((f) => f.type)).toEqual(["cf_agent_stream_resume_request"]);
  });

  it("fails to open when the transcript cannot load", async () => {
    const chat = new LightChat({
      agent: "assistant-agent",
      name: "s",
      host: "localhost:8787",
      connectTicket: async () => "ct",
      loadMessages: () => Promise.reject(new Error("nope")),
      openSocket: () => {
        throw new Error("must not connect");
      },
    });
    chat.start();
    await tick();
    expect(chat.getSnapshot().phase).toBe("failed");
    expect((chat.getSnapshot().loadError as Error).message).toBe("nope");
  });

  it("sends only the new message and streams the reply to ready", async () => {
    const h = await harness([user("m0", "Hi"), { id: "r0", role: "assistant", parts: [] }]);
    h.chat.send("  What is Parley?  ");
    expect(h.state().status).toBe("submitted");
    expect(h.state().busy).toBe(true);
    const [request] = h.socket().ofType("cf_agent_use_chat_request");
    const body = requestOf(request as Record<string, unknown>);
    expect(body.trigger).toBe("submit-message");
    expect(body.messages).toEqual([user("id2", "What is Parley?")]);
    const id = String(request?.id);
    h.stream(id, textReply("r1", "An assistant platform.").slice(0, 4));
    expect(h.state().status).toBe("streaming");
    h.stream(id, textReply("r1", "An assistant platform.").slice(4));
    h.socket().done(id);
    expect(h.state().status).toBe("ready");
    expect(h.state().busy).toBe(false);
    expect(h.state().messages.map((m) => m.id)).toEqual(["m0", "r0", "id2", "r1"]);
    expect(h.state().messages[3]?.metadata).toEqual({ turnId: "t1", usage: { totalTokens: 15 } });
    // Nothing while busy or empty.
    h.chat.send("   ");
    expect(h.socket().ofType("cf_agent_use_chat_request")).toHaveLength(1);
  });

  it("stops a reply: a cancel frame, the reply marked stopped, its later chunks dropped", async () => {
    const h = await harness();
    h.chat.send("Tell me a long story");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    h.stream(id, textReply("r1", "Once upon").slice(0, 4));
    h.chat.stop();
    expect(h.socket().ofType("cf_agent_chat_request_cancel")).toEqual([
      { type: "cf_agent_chat_request_cancel", id },
    ]);
    expect(h.state().busy).toBe(false);
    expect(h.state().stoppedIds.has("r1")).toBe(true);
    const text = () => h.state().messages[1]?.parts.find((p) => p.type === "text");
    const before = JSON.stringify(text());
    h.stream(id, [{ type: "text-delta", id: "a", delta: " a time" }]);
    h.socket().done(id, { outcome: "aborted" });
    expect(JSON.stringify(text())).toBe(before);
    expect(h.state().status).toBe("ready");
    // The next message goes as usual.
    h.chat.send("Again");
    expect(h.state().busy).toBe(true);
  });

  it("a stop before the reply started marks the reply that follows the message", async () => {
    const h = await harness();
    h.chat.send("Hi");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    h.chat.stop();
    expect(h.socket().ofType("cf_agent_chat_request_cancel")).toHaveLength(1);
    h.stream(id, textReply("r1", "late"));
    expect(h.state().messages).toHaveLength(1);
  });

  it("resumes a reply across a reconnect: new ticket, one ack, replay rebuilt without doubling", async () => {
    const h = await harness();
    h.chat.send("Hi");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    const chunks = textReply("r1", "alpha beta gamma");
    h.stream(id, chunks.slice(0, 4));
    h.socket().drop();
    expect(h.state().busy).toBe(true);
    await tick();
    await tick();
    expect(h.sockets).toHaveLength(2);
    expect(h.socket().url).toContain("ticket=ct_2");
    h.socket().open();
    // The server announces the live stream from onConnect and again for the probe: ack once.
    h.socket().frame({ type: "cf_agent_stream_resuming", id });
    h.socket().frame({ type: "cf_agent_stream_resuming", id });
    expect(h.socket().ofType("cf_agent_stream_resume_ack")).toEqual([
      { type: "cf_agent_stream_resume_ack", id },
    ]);
    h.stream(id, chunks.slice(0, 5), { replay: true });
    h.socket().chunk(id, null, { replay: true, replayComplete: true });
    h.stream(id, chunks.slice(5));
    h.socket().done(id);
    expect(h.state().status).toBe("ready");
    expect(h.state().messages.map((m) => m.id)).toEqual(["id2", "r1"]);
    expect(h.state().messages[1]?.parts).toEqual([
      { type: "step-start" },
      { type: "text", text: "alpha beta gamma", state: "done" },
    ]);
  });

  it("picks up a reply streaming when the page loaded (after a reload)", async () => {
    const h = await harness([user("m1", "Hi")]);
    h.socket().frame({ type: "cf_agent_stream_resuming", id: "req9" });
    expect(h.state().busy).toBe(true);
    h.stream("req9", textReply("r9", "resumed reply"), { replay: true });
    h.socket().done("req9");
    expect(h.state().messages.map((m) => m.id)).toEqual(["m1", "r9"]);
    expect(h.state().busy).toBe(false);
  });

  it("reloads the transcript when the reply finished while the socket was down", async () => {
    const h = await harness();
    h.chat.send("Hi");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    h.stream(id, textReply("r1", "partial words here").slice(0, 4));
    h.socket().drop();
    await tick();
    await tick();
    h.setTranscript([
      user("id2", "Hi"),
      { id: "r1", role: "assistant", parts: [{ type: "text", text: "whole" }] },
    ]);
    h.socket().open();
    h.socket().frame({ type: "cf_agent_stream_resume_none", reason: "idle" });
    expect(h.state().busy).toBe(false);
    await tick();
    expect(h.state().messages[1]?.parts).toEqual([{ type: "text", text: "whole" }]);
  });

  it("keeps a message typed while the socket was down and sends it when it opens", async () => {
    const h = await harness();
    h.socket().drop();
    h.chat.send("Offline hello");
    await tick();
    await tick();
    expect(h.sockets[1]?.sent).toEqual([]);
    h.socket().open();
    expect(h.socket().sent.map((f) => f.type)).toEqual([
      "cf_agent_stream_resume_request",
      "cf_agent_use_chat_request",
    ]);
    // Its answer to the probe is not a reason to drop the request just sent.
    h.socket().frame({ type: "cf_agent_stream_resume_none", reason: "idle" });
    expect(h.state().busy).toBe(true);
  });

  it("stays busy when the probe's answer replays an earlier failed turn while a message is on its way", async () => {
    // The socket's probe is answered after a message sent right away, and names the last turn
    // that failed: its replayed error must not end the reply just asked for.
    const h = await harness([user("m0", "Hi"), reply("r0", "Hello")]);
    h.chat.send("Try again");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    const busy: boolean[] = [];
    const unsubscribe = h.chat.subscribe(() => busy.push(h.state().busy));
    h.socket().frame({ type: "cf_agent_stream_resuming", id: "req_failed" });
    expect(h.socket().ofType("cf_agent_stream_resume_ack")).toEqual([
      { type: "cf_agent_stream_resume_ack", id: "req_failed" },
    ]);
    h.socket().done("req_failed", { error: true, body: "The model failed" });
    h.stream(id, textReply("r1", "Here it is."));
    h.socket().done(id);
    unsubscribe();
    expect(busy.slice(0, -1)).not.toContain(false);
    expect(busy.at(-1)).toBe(false);
    expect(h.state().status).toBe("ready");
    expect(h.state().error).toBeUndefined();
    expect(h.state().messages.map((m) => m.id)).toEqual(["m0", "r0", "id2", "r1"]);
  });

  it("follows another request's stream once the reply in flight has ended", async () => {
    const h = await harness();
    h.chat.send("Hi");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    // Another tab's turn starts streaming before this one's reply has ended.
    h.stream("req_other", [{ type: "start", messageId: "r9" }]);
    h.stream(id, textReply("r1", "Mine."));
    h.socket().done(id);
    expect(h.state().busy).toBe(true);
    h.stream("req_other", [
      { type: "text-start", id: "b" },
      { type: "text-delta", id: "b", delta: "Theirs." },
    ]);
    h.socket().done("req_other");
    expect(h.state().busy).toBe(false);
    expect(h.state().status).toBe("ready");
  });

  it("a stream error ends the turn with an error; a refusal and a final close are shown", async () => {
    const h = await harness();
    h.chat.send("Hi");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    h.socket().frame({
      type: "parley_error",
      error: { code: "insufficient_credits", message: "Out of credit" },
    });
    h.socket().frame({
      type: "cf_agent_use_chat_response",
      id,
      body: "Out of credit",
      done: true,
      error: true,
    });
    expect(h.state().status).toBe("error");
    expect(h.state().error?.message).toBe("Out of credit");
    expect(h.state().refusal).toEqual({ code: "insufficient_credits", message: "Out of credit" });
    h.chat.clearRefusal();
    expect(h.state().refusal).toBeNull();
    h.socket().drop(4403);
    await tick();
    expect(h.state().lost).toBe(true);
    expect(h.state().refusal?.code).toBe("forbidden");
    expect(h.sockets).toHaveLength(1);
    h.chat.send("more");
    expect(h.state().messages).toHaveLength(1);
  });

  it("a message the server refused before storing it leaves the transcript and returns to the composer", async () => {
    const h = await harness([user("m0", "Hi"), reply("r0", "Hello")]);
    for (const seq of [1, 2]) {
      h.chat.send("Over the limit?");
      const id = String(h.socket().ofType("cf_agent_use_chat_request").at(-1)?.id);
      h.socket().frame({
        type: "parley_error",
        requestId: id,
        error: {
          code: "spend_limit",
          message: "Your daily limit",
          details: { limit: "member_daily", period: "day" },
        },
      });
      h.socket().frame({ type: "cf_agent_use_chat_response", id, body: "x", error: true });
      h.socket().done(id, { outcome: "error" });
      // One state: the transcript as the server keeps it, no failed reply, the refusal named.
      expect(h.state().messages.map((m) => m.id)).toEqual(["m0", "r0"]);
      expect(h.state().status).toBe("ready");
      expect(h.state().error).toBeUndefined();
      expect(h.state().refusal).toMatchObject({
        code: "spend_limit",
        details: { limit: "member_daily" },
      });
      expect(h.state().returnedDraft).toEqual({ text: "Over the limit?", seq });
    }
  });

  it("a refused regeneration puts the reply it was to replace back", async () => {
    const h = await harness([user("m0", "Hi"), reply("r0", "Hello")]);
    h.chat.regenerate();
    expect(h.state().messages.map((m) => m.id)).toEqual(["m0"]);
    const id = String(h.socket().ofType("cf_agent_use_chat_request").at(-1)?.id);
    h.socket().frame({
      type: "parley_error",
      requestId: id,
      error: { code: "insufficient_credits", message: "Out of credits" },
    });
    h.socket().done(id, { outcome: "error" });
    expect(h.state().messages.map((m) => m.id)).toEqual(["m0", "r0"]);
    expect(h.state().returnedDraft).toBeNull();
    expect(h.state().error).toBeUndefined();
  });

  it("an error chunk before done fails the reply", async () => {
    const h = await harness();
    h.chat.send("Hi");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    h.stream(id, [
      { type: "start", messageId: "r1" },
      { type: "error", errorText: "Model failed" },
    ]);
    h.socket().done(id);
    expect(h.state().status).toBe("error");
    expect(h.state().error?.message).toBe("Model failed");
  });

  it("answers an approval and shows the continuation in the same reply", async () => {
    const h = await harness();
    h.chat.send("Remember tea");
    const id = String(h.socket().ofType("cf_agent_use_chat_request")[0]?.id);
    h.stream(id, [
      { type: "start", messageId: "r1" },
      {
        type: "tool-input-available",
        toolCallId: "c1",
        toolName: "remember",
        input: { fact: "tea" },
      },
      { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" },
      { type: "finish" },
    ]);
    h.socket().done(id);
    h.chat.respondToApproval({ id: "ap1", approved: true });
    expect(h.socket().ofType("cf_agent_tool_approval")).toEqual([
      { type: "cf_agent_tool_approval", toolCallId: "c1", approved: true, autoContinue: true },
    ]);
    expect(h.state().messages[1]?.parts[0]).toMatchObject({
      state: "approval-responded",
      approval: { id: "ap1", approved: true },
    });
    expect(h.state().busy).toBe(true);
    h.socket().frame({ type: "cf_agent_stream_resuming", id: "cont1" });
    h.stream(
      "cont1",
      [
        { type: "start", messageId: "r1" },
        { type: "tool-output-available", toolCallId: "c1", output: { saved: true } },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Saved." },
        { type: "text-end", id: "t" },
      ],
      { continuation: true },
    );
    h.socket().done("cont1", { continuation: true });
    expect(h.state().busy).toBe(false);
    expect(h.state().messages).toHaveLength(2);
    expect(h.state().messages[1]?.parts).toMatchObject([
      { state: "output-available", output: { saved: true } },
      { type: "text", text: "Saved." },
    ]);
  });

  it("ends busy when the server refuses an approval (no continuation is coming)", async () => {
    const asked: UIMessage = {
      id: "r1",
      role: "assistant",
      parts: [
        {
          type: "tool-remember",
          toolCallId: "c1",
          state: "approval-requested",
          input: { fact: "tea" },
          approval: { id: "ap1" },
        },
      ],
    };
    const h = await harness([user("m0", "Remember tea"), asked]);
    h.chat.respondToApproval({ id: "ap1", approved: true });
    expect(h.state().busy).toBe(true);
    h.socket().frame({
      type: "parley_error",
      error: { code: "conflict", message: "This tool call is already being answered" },
    });
    expect(h.state().busy).toBe(false);
    expect(h.state().refusal?.code).toBe("conflict");
  });

  it("keeps an approved call's approval once it ran, through the frames the server sends for it", async () => {
    // The sequence recorded from a real approval (test/chat-tools.test.ts's shop case): the start
    // chunk names no message, the answered part comes back whole, the continuation is announced,
    // replayed, then streamed, and the stored transcript arrives before the stream's end.
    const asked = {
      type: "tool-request_refund",
      toolCallId: "c1",
      toolName: "request_refund",
      state: "approval-requested",
      input: { orderId: "1001" },
      approval: { id: "ap1" },
    };
    const h = await harness([
      user("m1", "Refund it"),
      { id: "r1", role: "assistant", parts: [{ type: "step-start" }, asked] as never },
    ]);
    h.chat.respondToApproval({ id: "ap1", approved: true });
    const answered = {
      ...asked,
      state: "approval-responded",
      approval: { id: "ap1", approved: true },
    };
    h.socket().frame({
      type: "cf_agent_message_updated",
      message: { id: "r1", role: "assistant", parts: [{ type: "step-start" }, answered] },
    });
    h.socket().frame({ type: "cf_agent_stream_resuming", id: "cont1" });
    h.stream("cont1", [{ type: "start", messageMetadata: { turnId: "t" } }], {
      replay: true,
      continuation: true,
    });
    h.socket().chunk("cont1", null, { replay: true, replayComplete: true, continuation: true });
    h.stream(
      "cont1",
      [
        { type: "tool-output-available", toolCallId: "c1", output: { approvedBy: "eu_1" } },
        { type: "start-step" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Refunded." },
        { type: "text-end", id: "t" },
        { type: "finish-step" },
        { type: "finish" },
      ],
      { continuation: true },
    );
    h.socket().frame({ type: "cf_agent_chat_messages", messages: [user("m1", "Refund it")] });
    h.socket().done("cont1", { continuation: true });
    expect(h.state().busy).toBe(false);
    expect(h.state().messages[1]?.parts[1]).toMatchObject({
      state: "output-available",
      approval: { id: "ap1", approved: true },
      output: { approvedBy: "eu_1" },
    });
  });

  it("regenerates the last reply with the message it answered", async () => {
    const h = await harness([
      user("m1", "Hi"),
      { id: "r1", role: "assistant", parts: [{ type: "text", text: "Hello" }] },
    ]);
    h.chat.regenerate();
    expect(h.state().messages.map((m) => m.id)).toEqual(["m1"]);
    const body = requestOf(
      h.socket().ofType("cf_agent_use_chat_request")[0] as Record<string, unknown>,
    );
    expect(body).toEqual({ messages: [user("m1", "Hi")], trigger: "regenerate-message" });
  });

  it("takes the server's transcript when idle, and a cleared chat", async () => {
    const h = await harness([user("m1", "Hi")]);
    h.socket().frame({
      type: "cf_agent_chat_messages",
      messages: [user("m1", "Hi"), user("m2", "other tab")],
    });
    expect(h.state().messages).toHaveLength(2);
    h.socket().frame({ type: "cf_agent_chat_clear" });
    expect(h.state().messages).toEqual([]);
  });

  it("is busy while the server recovers an interrupted turn, until its stream ends", async () => {
    const h = await harness([user("m1", "Hi")]);
    h.socket().frame({ type: "cf_agent_chat_recovering", recovering: true });
    expect(h.state().busy).toBe(true);
    h.socket().frame({ type: "cf_agent_stream_resuming", id: "rec1" });
    h.stream("rec1", textReply("r1", "recovered"));
    h.socket().done("rec1");
    expect(h.state().busy).toBe(false);
    h.socket().frame({ type: "cf_agent_chat_recovering", recovering: true });
    h.socket().frame({ type: "cf_agent_chat_recovering", recovering: false });
    expect(h.state().busy).toBe(false);
  });

  it("reconnects after dispose and start (strict mode) without reloading", async () => {
    const h = await harness([user("m1", "Hi")]);
    h.chat.dispose();
    expect(h.sockets[0]?.closed).toBe(true);
    h.chat.start();
    await tick();
    expect(h.sockets).toHaveLength(2);
    expect(h.loads()).toBe(1);
  });
});
