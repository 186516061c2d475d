/**
 * `busy` over the real SDK hooks (`useAgentChat` and the AI SDK's chat) and a fake agent socket
 * that plays the server's frames: from Send until the reply has ended, never false in between,
 * and never true after. use-parley-chat.test.tsx covers the rest of the hook with the SDK
 * replaced by doubles; a double cannot show how the SDK's own requests share its `status`.
 */
import { act, cleanup, renderHook } from "@testing-library/react";
import type { UIMessage } from "ai";
import { createElement, type ReactNode, Suspense } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";

/** The agent socket as `useAgentChat` uses it, with the server's side played by the test. */
class FakeAgentSocket extends EventTarget {
  readonly agent = "assistant-agent";
  readonly _pk: string;
  readonly partySocketOptions: { host: string; party: string; room: string };
  readyState = 1;
  sent: Record<string, unknown>[] = [];
  constructor(readonly name: string) {
    super();
    this._pk = name;
    this.partySocketOptions = { host: "parley.test", party: this.agent, room: name };
  }
  getHttpUrl() {
    return `http://parley.test/agents/${this.agent}/${this.name}`;
  }
  send(data: string) {
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
    return true;
  }
  ofType(type: string) {
    return this.sent.filter((frame) => frame.type === type);
  }
  /** The id of the last chat request this tab sent. */
  lastRequestId() {
    return String(this.ofType("cf_agent_use_chat_request").at(-1)?.id);
  }
  /** The probe id of the last resume request (the socket's "is a reply streaming?"). */
  lastProbeId() {
    return String(this.ofType("cf_agent_stream_resume_request").at(-1)?.probeId);
  }
  frame(frame: Record<string, unknown>) {
    this.dispatchEvent(new MessageEvent("message", { data: JSON.stringify(frame) }));
  }
  chunk(id: string, chunk: Record<string, unknown>, extra: Record<string, unknown> = {}) {
    this.frame({
      type: "cf_agent_use_chat_response",
      id,
      body: JSON.stringify(chunk),
      done: false,
      ...extra,
    });
  }
  done(id: string, extra: Record<string, unknown> = {}) {
    this.frame({ type: "cf_agent_use_chat_response", id, body: "", done: true, ...extra });
  }
  /** The server's answer to the open socket's probe: no reply is streaming. */
  resumeNone(probeId = this.lastProbeId()) {
    this.frame({ type: "cf_agent_stream_resume_none", reason: "idle", probeId });
  }
}

const sdk = vi.hoisted(() => ({ socket: null as unknown }));
vi.mock("agents/react", () => ({ useAgent: () => sdk.socket }));

const { useParleyChat } = await import("./use-parley-chat.ts");

afterEach(cleanup);

const user = (id: string, text = id): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});

/** Lets the SDK's promises, timers and updates (messages are throttled to one per 50 ms) run. */
const settle = () => act(() => new Promise((resolve) => setTimeout(resolve, 60)));

let chats = 0;

/** The hook on a fresh socket, recording `busy` at every render. */
async function open(transcript: UIMessage[] = [user("u0", "Hello")]) {
  const socket = new FakeAgentSocket(`ses_${++chats}`);
  sdk.socket = socket;
  const renders: boolean[] = [];
  const wrapper = ({ children }: { children: ReactNode }) =>
    createElement(Suspense, { fallback: null }, children);
  let hook: ReturnType<typeof renderHook<ReturnType<typeof useParleyChat>, unknown>> | undefined;
  await act(async () => {
    hook = renderHook(
      () => {
        const chat = useParleyChat({
          agent: "assistant-agent",
          name: socket.name,
          connectTicket: () => Promise.resolve("ct_1"),
          loadMessages: () => Promise.resolve(transcript),
        });
        renders.push(chat.busy);
        return chat;
      },
      { wrapper },
    );
  });
  await settle();
  if (!hook) throw new Error("not rendered");
  const result = hook.result;
  return {
    socket,
    chat: () => result.current,
    /** Every render's `busy` from `from` (an index into the renders) on. */
    busySince: (from: number) => renders.slice(from),
    renders: () => renders.length,
  };
}

/** A reply's first chunks: its message, and text that has started. */
function replyStarts(socket: FakeAgentSocket, id: string, messageId: string) {
  socket.chunk(id, { type: "start", messageId });
  socket.chunk(id, { type: "start-step" });
  socket.chunk(id, { type: "text-start", id: "t" });
  socket.chunk(id, { type: "text-delta", id: "t", delta: "Once upon" });
}

function replyEnds(socket: FakeAgentSocket, id: string) {
  socket.chunk(id, { type: "text-delta", id: "t", delta: " a time." });
  socket.chunk(id, { type: "text-end", id: "t" });
  socket.chunk(id, { type: "finish-step" });
  socket.chunk(id, { type: "finish" });
  socket.done(id);
}

/** A reply waiting for the person's approval of its tool call. */
const askingApproval: UIMessage = {
  id: "r0",
  role: "assistant",
  parts: [
    {
      type: "tool-write_memory",
      toolCallId: "c1",
      state: "approval-requested",
      input: { fact: "tea" },
      approval: { id: "ap1" },
    },
  ],
};

describe("useParleyChat busy", () => {
  it("stays busy when the answer to the socket's probe comes after a message sent right away", async () => {
    // The socket asks "is a reply streaming?" when it opens; a person who sends before the server
    // answers (a loaded server answers late) got "ready" from that answer in the middle of their
    // reply: Stop gave way to Send until the next chunk, and an Enter then sent a message.
    const h = await open();
    expect(h.socket.ofType("cf_agent_stream_resume_request")).toHaveLength(1);
    const from = h.renders();
    act(() => h.chat().send("Tell me a story"));
    await settle();
    const id = h.socket.lastRequestId();
    replyStarts(h.socket, id, "r1");
    await settle();
    expect(h.chat().status).toBe("streaming");
    h.socket.resumeNone();
    await settle();
    expect(h.chat().busy).toBe(true);
    replyEnds(h.socket, id);
    await settle();
    const busy = h.busySince(from);
    expect(busy.at(-1)).toBe(false);
    // Busy at every render from the send until the reply ended, then not.
    expect(busy.slice(0, busy.indexOf(false))).not.toContain(false);
    expect(busy.slice(busy.indexOf(false))).not.toContain(true);
    expect(h.chat().messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
  });

  it("stays busy when the probe's answer comes between Send and the first token", async () => {
    const h = await open();
    const from = h.renders();
    act(() => h.chat().send("Take your time"));
    await settle();
    h.socket.resumeNone();
    await settle();
    expect(h.chat().busy).toBe(true);
    const id = h.socket.lastRequestId();
    replyStarts(h.socket, id, "r1");
    replyEnds(h.socket, id);
    await settle();
    const busy = h.busySince(from);
    expect(busy.slice(0, busy.indexOf(false))).not.toContain(false);
    expect(busy.at(-1)).toBe(false);
  });

  it("stays busy when an earlier failed turn is replayed while a message is on its way", async () => {
    // The probe's answer names the last turn that failed; its replayed error ends that resumed
    // request ("error"), not the one just sent.
    const h = await open();
    const probe = h.socket.lastProbeId();
    const from = h.renders();
    act(() => h.chat().send("Try again"));
    await settle();
    const id = h.socket.lastRequestId();
    h.socket.frame({ type: "cf_agent_stream_resuming", id: "req_failed", probeId: probe });
    await settle();
    h.socket.frame({
      type: "cf_agent_use_chat_response",
      id: "req_failed",
      body: "The model failed",
      done: true,
      error: true,
    });
    await settle();
    expect(h.chat().busy).toBe(true);
    replyStarts(h.socket, id, "r1");
    replyEnds(h.socket, id);
    await settle();
    const busy = h.busySince(from);
    expect(busy.slice(0, busy.indexOf(false))).not.toContain(false);
    expect(busy.at(-1)).toBe(false);
    expect(h.chat().error).toBeUndefined();
  });

  it("is busy from an approval until its continuation has ended, with no render of Send between", async () => {
    // The SDK starts the continuation a timer later; its status stayed "ready" until then.
    const h = await open([user("u0", "Remember tea"), askingApproval]);
    h.socket.resumeNone();
    await settle();
    expect(h.chat().busy).toBe(false);
    const from = h.renders();
    act(() => h.chat().respondToApproval({ id: "ap1", approved: true }));
    expect(h.chat().busy).toBe(true);
    await settle();
    expect(h.socket.ofType("cf_agent_tool_approval")).toHaveLength(1);
    h.socket.frame({
      type: "cf_agent_stream_resuming",
      id: "req_cont",
      probeId: h.socket.lastProbeId(),
    });
    await settle();
    const extra = { continuation: true };
    h.socket.chunk("req_cont", { type: "start" }, extra);
    h.socket.chunk("req_cont", { type: "text-start", id: "t" }, extra);
    h.socket.chunk("req_cont", { type: "text-delta", id: "t", delta: "Saved." }, extra);
    h.socket.chunk("req_cont", { type: "text-end", id: "t" }, extra);
    h.socket.chunk("req_cont", { type: "finish" }, extra);
    h.socket.done("req_cont", extra);
    await settle();
    const busy = h.busySince(from);
    expect(busy.slice(0, busy.indexOf(false))).not.toContain(false);
    expect(busy.at(-1)).toBe(false);
  });

  it("ends busy when the server refuses an approval (no continuation is coming)", async () => {
    const h = await open([user("u0", "Remember tea"), askingApproval]);
    h.socket.resumeNone();
    await settle();
    act(() => h.chat().respondToApproval({ id: "ap1", approved: true }));
    await settle();
    h.socket.frame({
      type: "parley_error",
      error: { code: "conflict", message: "This tool call is already being answered" },
    });
    // The continuation's probe finds nothing to resume.
    h.socket.resumeNone();
    await settle();
    expect(h.chat().busy).toBe(false);
    expect(h.chat().refusal?.code).toBe("conflict");
  });

  it("shows the message and busy in the same render as the send", async () => {
    // Stop takes Send's place within the key press: an Esc right after Enter stops the reply.
    const h = await open();
    h.socket.resumeNone();
    await settle();
    act(() => h.chat().send("Quick question"));
    // Read before the SDK's promises run: what the key press itself rendered.
    expect(h.chat().busy).toBe(true);
    expect(h.chat().status).toBe("submitted");
    expect(h.chat().messages.at(-1)).toMatchObject({
      role: "user",
      parts: [{ type: "text", text: "Quick question" }],
    });
  });

  it("ends busy when the reply completes, is stopped, fails, or its socket drops", async () => {
    const h = await open();
    h.socket.resumeNone();
    await settle();

    act(() => h.chat().send("One"));
    await settle();
    replyStarts(h.socket, h.socket.lastRequestId(), "r1");
    replyEnds(h.socket, h.socket.lastRequestId());
    await settle();
    expect(h.chat().busy).toBe(false);

    act(() => h.chat().send("Two"));
    await settle();
    replyStarts(h.socket, h.socket.lastRequestId(), "r2");
    await settle();
    act(() => h.chat().stop());
    await settle();
    expect(h.socket.ofType("cf_agent_chat_request_cancel")).toHaveLength(1);
    expect(h.chat().busy).toBe(false);

    act(() => h.chat().send("Three"));
    await settle();
    const failing = h.socket.lastRequestId();
    replyStarts(h.socket, failing, "r3");
    h.socket.frame({
      type: "cf_agent_use_chat_response",
      id: failing,
      body: "Model failed",
      done: false,
      error: true,
    });
    await settle();
    expect(h.chat().busy).toBe(false);
    expect(h.chat().status).toBe("error");

    act(() => h.chat().send("Four"));
    await settle();
    replyStarts(h.socket, h.socket.lastRequestId(), "r4");
    await settle();
    await act(async () => {
      h.socket.dispatchEvent(new CloseEvent("close", { code: 1006 }));
    });
    await settle();
    expect(h.chat().busy).toBe(false);
  });

  it("ends busy when the server refuses the message, and returns it to the composer", async () => {
    const h = await open();
    h.socket.resumeNone();
    await settle();
    act(() => h.chat().send("Over the limit"));
    await settle();
    const id = h.socket.lastRequestId();
    h.socket.frame({
      type: "parley_error",
      requestId: id,
      error: { code: "spend_limit", message: "Daily limit" },
    });
    h.socket.frame({
      type: "cf_agent_use_chat_response",
      id,
      body: "Daily limit",
      done: false,
      error: true,
    });
    h.socket.done(id, { outcome: "error" });
    await settle();
    expect(h.chat().busy).toBe(false);
    expect(h.chat().returnedDraft).toEqual({ text: "Over the limit", seq: 1 });
    expect(h.chat().messages.map((m) => m.id)).toEqual(["u0"]);
  });

  it("stays busy through a late probe answer after a regeneration", async () => {
    const h = await open([
      user("u0", "Hello"),
      { id: "r0", role: "assistant", parts: [{ type: "text", text: "Hi", state: "done" }] },
    ]);
    const from = h.renders();
    act(() => h.chat().regenerate());
    await settle();
    const id = h.socket.lastRequestId();
    replyStarts(h.socket, id, "r1");
    await settle();
    h.socket.resumeNone();
    await settle();
    expect(h.chat().busy).toBe(true);
    replyEnds(h.socket, id);
    await settle();
    const busy = h.busySince(from);
    expect(busy.slice(0, busy.indexOf(false))).not.toContain(false);
    expect(busy.at(-1)).toBe(false);
  });
});
