/**
 * The hook against a fake connection: the SDK hooks are replaced by doubles so the test can play
 * socket frames and closes, and see what the hook asks the SDK for.
 */
import { act, cleanup, renderHook } from "@testing-library/react";
import type { UIMessage } from "ai";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

const sdk = vi.hoisted(() => ({
  connection: new EventTarget(),
  agentOptions: [] as Record<string, unknown>[],
  chatOptions: [] as Record<string, unknown>[],
  chat: {} as Record<string, unknown>,
}));

vi.mock("agents/react", () => ({
  useAgent: (options: Record<string, unknown>) => {
    sdk.agentOptions.push(options);
    return sdk.connection;
  },
}));
vi.mock("@cloudflare/ai-chat/react", () => ({
  useAgentChat: (options: Record<string, unknown>) => {
    sdk.chatOptions.push(options);
    return sdk.chat;
  },
}));

const { useParleyChat } = await import("./use-parley-chat.ts");

/** What `send` hands the SDK: the whole user message (see `send` for why not `{ text }`). */
const asked = (text: string) => ({ role: "user", parts: [{ type: "text", text }] });

const user = (id: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: id }] });
const assistant = (id: string): UIMessage => ({
  id,
  role: "assistant",
  parts: [{ type: "text", text: id }],
});

beforeEach(() => {
  sdk.connection = new EventTarget();
  sdk.agentOptions = [];
  sdk.chatOptions = [];
  sdk.chat = {
    messages: [user("u1")],
    status: "ready",
    error: undefined,
    isStreaming: false,
    isRecovering: false,
    isToolContinuation: false,
    setMessages: vi.fn(),
    sendMessage: vi.fn(() => Promise.resolve()),
    stop: vi.fn(() => Promise.resolve()),
    regenerate: vi.fn(() => Promise.resolve()),
    addToolApprovalResponse: vi.fn(),
    clearError: vi.fn(),
  };
});
afterEach(cleanup);

function setup() {
  const connectTicket = vi.fn(() => Promise.resolve("ticket-1"));
  const loadMessages = vi.fn(() => Promise.resolve([user("u1"), assistant("a1")]));
  const hook = renderHook(() =>
    useParleyChat({ agent: "assistant-agent", name: "s1", connectTicket, loadMessages }),
  );
  return { hook, connectTicket, loadMessages };
}

describe("useParleyChat", () => {
  it("connects with a fresh ticket and never pushes history back", async () => {
    const { connectTicket } = setup();
    const agent = sdk.agentOptions.at(-1) as { agent: string; name: string; query: () => unknown };
    expect(agent).toMatchObject({ agent: "assistant-agent", name: "s1" });
    expect(await agent.query()).toEqual({ ticket: "ticket-1" });
    expect(connectTicket).toHaveBeenCalledOnce();
    const chat = sdk.chatOptions.at(-1) as {
      syncMessagesToServer: boolean;
      prepareSendMessagesRequest: (o: { messages: UIMessage[] }) => {
        body: { messages: UIMessage[] };
      };
    };
    expect(chat.syncMessagesToServer).toBe(false);
    const body = chat.prepareSendMessagesRequest({ messages: [user("old"), user("new")] }).body;
    expect(body.messages.map((m) => m.id)).toEqual(["new"]);
  });

  it("turns parley_error frames into a refusal, cleared by a send", () => {
    const { hook } = setup();
    act(() => {
      sdk.connection.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({
            type: "parley_error",
            error: { code: "rate_limited", message: "Slow down" },
          }),
        }),
      );
    });
    expect(hook.result.current.refusal).toEqual({ code: "rate_limited", message: "Slow down" });
    act(() => hook.result.current.send("  again "));
    expect(sdk.chat.sendMessage).toHaveBeenCalledExactlyOnceWith(asked("again"));
    expect(hook.result.current.refusal).toBeNull();
  });

  it("takes a refused message back out of the transcript, into the composer, once the SDK's turn ends", async () => {
    // The SDK's promise for a request settles when the request has ended.
    let endRequest: () => void = () => undefined;
    const request = new Promise<void>((resolve) => {
      endRequest = resolve;
    });
    sdk.chat = {
      ...sdk.chat,
      messages: [user("u1"), assistant("a1")],
      sendMessage: vi.fn(() => request),
    };
    const { hook } = setup();
    act(() => hook.result.current.send("over the limit"));
    // The SDK shows the message at once; the server refuses it (storing nothing) and ends the turn.
    const sent: UIMessage = {
      id: "n1",
      role: "user",
      parts: [{ type: "text", text: "over the limit" }],
    };
    sdk.chat = { ...sdk.chat, status: "submitted", messages: [user("u1"), assistant("a1"), sent] };
    hook.rerender();
    act(() => {
      sdk.connection.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({
            type: "parley_error",
            requestId: "req-1",
            error: { code: "spend_limit", message: "Daily limit", details: { limit: "own_daily" } },
          }),
        }),
      );
    });
    expect(sdk.chat.setMessages).not.toHaveBeenCalled();
    sdk.chat = { ...sdk.chat, status: "error", error: new Error("Daily limit") };
    hook.rerender();
    expect(sdk.chat.setMessages).not.toHaveBeenCalled();
    await act(async () => endRequest());
    expect(sdk.chat.setMessages).toHaveBeenCalledExactlyOnceWith([user("u1"), assistant("a1")]);
    expect(sdk.chat.clearError).toHaveBeenCalledOnce();
    expect(hook.result.current.returnedDraft).toEqual({ text: "over the limit", seq: 1 });
    expect(hook.result.current.refusal).toMatchObject({ code: "spend_limit", requestId: "req-1" });
  });

  it("asks for a fresh ticket when the chat is opened again, never the spent one the SDK cached", () => {
    const first = setup();
    const before = sdk.agentOptions.at(-1) as { queryDeps: unknown[] };
    first.hook.rerender();
    // Re-rendered while mounted: the same query (the socket stays).
    expect((sdk.agentOptions.at(-1) as { queryDeps: unknown[] }).queryDeps).toEqual(
      before.queryDeps,
    );
    first.hook.unmount();
    setup();
    expect((sdk.agentOptions.at(-1) as { queryDeps: unknown[] }).queryDeps).not.toEqual(
      before.queryDeps,
    );
  });

  it("is lost for good on a 4410 close and sends nothing after", () => {
    const { hook } = setup();
    act(() => {
      sdk.connection.dispatchEvent(new CloseEvent("close", { code: 4410 }));
    });
    expect(hook.result.current.lost).toBe(true);
    expect(hook.result.current.refusal?.code).toBe("gone");
    act(() => hook.result.current.send("hello"));
    expect(sdk.chat.sendMessage).not.toHaveBeenCalled();
  });

  it("stays connected through an ordinary close", () => {
    const { hook } = setup();
    act(() => {
      sdk.connection.dispatchEvent(new CloseEvent("close", { code: 1006 }));
    });
    expect(hook.result.current.lost).toBe(false);
  });

  it("reloads the transcript when the server says there is no stream to resume", async () => {
    const { loadMessages } = setup();
    await act(async () => {
      sdk.connection.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({ type: "cf_agent_stream_resume_none" }),
        }),
      );
    });
    expect(loadMessages).toHaveBeenCalledOnce();
    expect(sdk.chat.setMessages).toHaveBeenCalledExactlyOnceWith([user("u1"), assistant("a1")]);
  });

  it("leaves the transcript alone when the reload brings the same messages (no re-render of all)", async () => {
    sdk.chat = { ...sdk.chat, messages: [user("u1"), assistant("a1")] };
    const { loadMessages } = setup();
    await act(async () => {
      sdk.connection.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({ type: "cf_agent_stream_resume_none" }),
        }),
      );
    });
    expect(loadMessages).toHaveBeenCalledOnce();
    expect(sdk.chat.setMessages).not.toHaveBeenCalled();
  });

  it("keeps a message sent while that reload was on its way (it would vanish with its reply)", async () => {
    const { hook, loadMessages } = setup();
    let answer: (messages: UIMessage[]) => void = () => undefined;
    loadMessages.mockImplementationOnce(
      () =>
        new Promise<UIMessage[]>((resolve) => {
          answer = resolve;
        }),
    );
    act(() => {
      sdk.connection.dispatchEvent(
        new MessageEvent("message", {
          data: JSON.stringify({ type: "cf_agent_stream_resume_none" }),
        }),
      );
    });
    act(() => hook.result.current.send("typed right away"));
    await act(async () => answer([user("u1"), assistant("a1")]));
    expect(sdk.chat.sendMessage).toHaveBeenCalledExactlyOnceWith(asked("typed right away"));
    expect(sdk.chat.setMessages).not.toHaveBeenCalled();
  });

  it("remembers a stop pressed before the reply existed, for the reply that follows", () => {
    sdk.chat.status = "submitted";
    const { hook } = setup();
    expect(hook.result.current.busy).toBe(true);
    act(() => hook.result.current.stop());
    expect(sdk.chat.stop).toHaveBeenCalledOnce();
    sdk.chat = { ...sdk.chat, status: "ready", messages: [user("u1"), assistant("a1")] };
    hook.rerender();
    expect([...hook.result.current.stoppedIds]).toEqual(["a1"]);
  });
});
