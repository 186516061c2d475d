import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import type { UIMessage } from "ai";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ChatView, TRANSCRIPT_WINDOW } from "./chat-view.tsx";
import { fakeChat, reply, userMessage } from "./test-chat.ts";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const items = () =>
  within(screen.getByRole("list", { name: "Chat messages" })).getAllByRole("listitem");

describe("ChatView transcript", () => {
  it("renders replies as markdown and the person's text as typed", async () => {
    const chat = fakeChat({
      messages: [
        userMessage("u1", "## not a heading\n**kept**"),
        reply("a1", "## Answer\n\n- one"),
      ],
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(await screen.findByRole("heading", { level: 2, name: "Answer" })).toBeTruthy();
    expect(screen.getAllByRole("heading")).toHaveLength(1);
    const mine = items()[0];
    expect(mine?.textContent).toContain("## not a heading\n**kept**");
  });

  it("keeps reasoning in its own collapsible section, collapsed once the answer started", async () => {
    const message: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "reasoning", text: "Weighing the options", state: "done" },
        { type: "text", text: "The answer", state: "done" },
      ],
    };
    render(<ChatView chat={fakeChat({ messages: [message] })} label="Chat" />);
    const toggle = screen.getByRole("button", { name: "Reasoning" });
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    const region = document.getElementById(toggle.getAttribute("aria-controls") ?? "");
    expect(region?.textContent).toBe("Weighing the options");
    expect(region?.hidden).toBe(true);
    // Separate from the answer: the answer's markdown is not inside the reasoning box.
    expect(region?.contains(await screen.findByText("The answer"))).toBe(false);
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(region?.hidden).toBe(false);
  });

  it("shows reasoning open while the model is only thinking", () => {
    const message: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [{ type: "reasoning", text: "Thinking hard", state: "streaming" }],
    };
    const chat = fakeChat({
      messages: [userMessage("u1", "q"), message],
      status: "streaming",
      busy: true,
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(screen.getByRole("button", { name: /Reasoning/ }).getAttribute("aria-expanded")).toBe(
      "true",
    );
  });

  it("shows Thinking… between Send and the first token, and not once text arrives", () => {
    const chat = fakeChat({ messages: [userMessage("u1", "hi")], status: "submitted", busy: true });
    const { rerender } = render(<ChatView chat={chat} label="Chat" />);
    expect(screen.getByRole("status").textContent).toContain("Thinking…");
    const streaming = {
      ...chat,
      status: "streaming" as const,
      messages: [...chat.messages, reply("a1", "Hel")],
    };
    rerender(<ChatView chat={streaming} label="Chat" />);
    expect(screen.queryByText("Thinking…")).toBeNull();
  });

  it("shows no empty bubble above Thinking… while the reply has started but has no text", () => {
    const chat = fakeChat({
      messages: [userMessage("u1", "hi"), reply("a1", "")],
      status: "streaming",
      busy: true,
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(screen.getByRole("status").textContent).toContain("Thinking…");
    expect(items()).toHaveLength(1);
  });
});

describe("ChatView reply footer", () => {
  it("marks a reply the server says was stopped, with its sub-cent cost", () => {
    const chat = fakeChat({
      messages: [
        userMessage("u1", "hi"),
        reply("a1", "Partial", { finish: "stopped", priceMicros: 4200 }),
      ],
    });
    render(<ChatView chat={chat} label="Chat" />);
    const bubble = items()[1];
    expect(bubble?.textContent).toContain("Stopped");
    expect(bubble?.textContent).toContain("Cost $0.0042");
  });

  it("shows a reply's whole cost with its tool calls' part named", () => {
    const chat = fakeChat({
      messages: [
        userMessage("u1", "hi"),
        reply("a1", "Done", { finish: "completed", priceMicros: 1_260, toolPriceMicros: 1_000 }),
        userMessage("u2", "again"),
        reply("a2", "Done", { finish: "completed", priceMicros: 70, toolPriceMicros: 0 }),
      ],
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(items()[1]?.textContent).toContain("Cost $0.00126 (tool calls $0.001)");
    expect(items()[3]?.textContent).toContain("Cost $0.00007");
    expect(items()[3]?.textContent).not.toContain("tool calls");
  });

  it("marks a reply stopped in this tab even before the server says so", () => {
    const chat = fakeChat({
      messages: [userMessage("u1", "hi"), reply("a1", "Partial")],
      stoppedIds: new Set(["a1"]),
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(items()[1]?.textContent).toContain("Stopped");
  });

  it("marks a stopped reply 'Stopped', not 'Failed', when the stop surfaced as an error", () => {
    // Stopping aborts the stream; the transport may report that as the request's error.
    const chat = fakeChat({
      messages: [userMessage("u1", "hi"), reply("a1", "Partial")],
      stoppedIds: new Set(["a1"]),
      error: new Error("WebSocket closed mid-stream"),
    });
    const { rerender } = render(<ChatView chat={chat} label="Chat" />);
    expect(items()[1]?.textContent).toContain("Stopped");
    expect(items()[1]?.textContent).not.toContain("Failed");
    // And when the server's stored reply says so, in another tab (no local stop).
    const stored = reply("a1", "Partial", { finish: "stopped" });
    rerender(
      <ChatView
        chat={{ ...chat, stoppedIds: new Set(), messages: [userMessage("u1", "hi"), stored] }}
        label="Chat"
      />,
    );
    expect(items()[1]?.textContent).toContain("Stopped");
  });

  it("shows an app's end user no billing figures when showCost is off: no cost, no tokens", () => {
    const tokens = { promptTokens: 10, completionTokens: 5 };
    const chat = fakeChat({
      messages: [userMessage("u1", "hi"), reply("a1", "Hello", { priceMicros: 900, tokens })],
    });
    const { unmount } = render(<ChatView chat={chat} label="Chat" showCost={false} />);
    expect(items()[1]?.textContent).not.toContain("Cost");
    expect(items()[1]?.textContent).not.toContain("tokens");
    expect(within(items()[1] as HTMLElement).getByRole("button", { name: "Copy" })).toBeTruthy();
    unmount();
    render(<ChatView chat={chat} label="Chat" />);
    expect(items()[1]?.textContent).toContain("Cost $0.0009 · 15 tokens");
  });

  it("switches between a regenerated reply and its earlier versions, kept by the server", async () => {
    const earlier = {
      parts: [{ type: "text", text: "First answer", state: "done" }],
      metadata: { priceMicros: 100, finish: "completed" },
    };
    const chat = fakeChat({
      messages: [
        userMessage("u1", "hi"),
        reply("a1", "Second answer", { priceMicros: 200, versions: [earlier] }),
      ],
    });
    render(<ChatView chat={chat} label="Chat" regenerate />);
    const versions = screen.getByRole("group", { name: "Versions of this reply" });
    expect(versions.textContent).toContain("2 / 2");
    expect(items()[1]?.textContent).toContain("Second answer");
    fireEvent.click(within(versions).getByRole("button", { name: "Earlier version" }));
    expect(await within(items()[1] as HTMLElement).findByText("First answer")).toBeTruthy();
    expect(versions.textContent).toContain("1 / 2");
    expect(items()[1]?.textContent).toContain("Cost $0.0001");
    // An earlier version is a record: no Regenerate on it.
    expect(screen.queryByRole("button", { name: "Regenerate" })).toBeNull();
    fireEvent.click(within(versions).getByRole("button", { name: "Later version" }));
    expect(await within(items()[1] as HTMLElement).findByText("Second answer")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Regenerate" })).toBeTruthy();
  });

  it("shows a failed reply's error inside that reply, with its cost", () => {
    const chat = fakeChat({
      messages: [userMessage("u1", "hi"), reply("a1", "Half an", { priceMicros: 900 })],
      error: new Error("Model unavailable"),
      status: "error",
    });
    render(<ChatView chat={chat} label="Chat" />);
    const bubble = items()[1];
    const alert = within(bubble as HTMLElement).getByRole("alert");
    expect(alert.textContent).toBe("Failed: Model unavailable");
    expect(bubble?.textContent).toContain("Cost $0.0009");
  });

  it("reads a failure the server wrote in the metadata", () => {
    const chat = fakeChat({
      messages: [
        userMessage("u1", "hi"),
        reply("a1", "x", { finish: "failed", error: "Upstream timeout", priceMicros: 12 }),
      ],
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(screen.getByRole("alert").textContent).toBe("Failed: Upstream timeout");
    expect(items()[1]?.textContent).toContain("Cost $0.000012");
  });

  it("words the server's failure code when it gave no message", () => {
    const chat = fakeChat({
      messages: [
        userMessage("u1", "hi"),
        reply("a1", "x", { finish: "failed", code: "model_stalled" }),
      ],
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(screen.getByRole("alert").textContent).toBe("Failed: The model stopped responding.");
  });

  it("puts a failure with no reply yet where the reply would be", () => {
    const chat = fakeChat({
      messages: [userMessage("u1", "hi")],
      error: new Error("Refused"),
      status: "error",
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect(items()).toHaveLength(2);
    expect(within(items()[1] as HTMLElement).getByRole("alert").textContent).toBe(
      "Failed: Refused",
    );
  });

  it("copies a reply's text with navigator.clipboard.writeText", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { configurable: true, value: { writeText } });
    const chat = fakeChat({ messages: [userMessage("u1", "hi"), reply("a1", "Copy **me**")] });
    render(<ChatView chat={chat} label="Chat" />);
    fireEvent.click(within(items()[1] as HTMLElement).getByRole("button", { name: "Copy" }));
    expect(writeText).toHaveBeenCalledExactlyOnceWith("Copy **me**");
    expect(
      await within(items()[1] as HTMLElement).findByRole("button", { name: "Copied" }),
    ).toBeTruthy();
  });

  it("offers Regenerate on the last reply only, when enabled and idle", () => {
    const chat = fakeChat({
      messages: [
        userMessage("u1", "a"),
        reply("a1", "one"),
        userMessage("u2", "b"),
        reply("a2", "two"),
      ],
    });
    const { rerender } = render(<ChatView chat={chat} label="Chat" regenerate />);
    const buttons = screen.getAllByRole("button", { name: "Regenerate" });
    expect(buttons).toHaveLength(1);
    expect(items()[3]?.contains(buttons[0] ?? null)).toBe(true);
    fireEvent.click(buttons[0] as HTMLElement);
    expect(chat.regenerate).toHaveBeenCalledOnce();
    rerender(<ChatView chat={chat} label="Chat" />);
    expect(screen.queryByRole("button", { name: "Regenerate" })).toBeNull();
  });

  it("explains a billing stop with the app's own call to action per code", () => {
    const renderStopAction = vi.fn((code: string) =>
      code === "spend_limit" ? <span>Ask an admin</span> : <a href="/billing">Top up credits</a>,
    );
    const chat = fakeChat({
      messages: [
        userMessage("u1", "a"),
        reply("a1", "", { code: "insufficient_credits" }),
        userMessage("u2", "b"),
        reply("a2", "", { code: "spend_limit" }),
      ],
    });
    render(<ChatView chat={chat} label="Chat" renderStopAction={renderStopAction} />);
    expect(items()[1]?.textContent).toContain("out of credits");
    expect(
      within(items()[1] as HTMLElement).getByRole("link", { name: "Top up credits" }),
    ).toBeTruthy();
    expect(items()[3]?.textContent).toContain("A spend limit stopped this reply.");
    expect(items()[3]?.textContent).toContain("Ask an admin");
    expect(within(items()[3] as HTMLElement).queryByRole("link")).toBeNull();
  });

  it("says a billing stop once, with no cost figures for a reply that made no call", async () => {
    const words = "Your organization is out of credits. An owner or admin can top up.";
    const chat = fakeChat({
      messages: [
        userMessage("u1", "a"),
        reply("a1", words, { code: "insufficient_credits", priceMicros: 0, tokens: zero }),
      ],
    });
    render(
      <ChatView
        chat={chat}
        label="Chat"
        renderStopAction={() => <a href="/billing">Top up credits</a>}
      />,
    );
    await screen.findByText(words);
    const text = items()[1]?.textContent ?? "";
    expect(text.split("out of credits").length - 1).toBe(1);
    expect(text).not.toContain("Cost");
    expect(text).not.toContain("tokens");
    expect(
      within(items()[1] as HTMLElement).getByRole("link", { name: "Top up credits" }),
    ).toBeTruthy();
  });
});

const zero = { promptTokens: 0, completionTokens: 0, cachedPromptTokens: 0, reasoningTokens: 0 };

describe("ChatView composer and state", () => {
  it("sends through the chat and stops with Esc while busy", () => {
    const chat = fakeChat();
    const { rerender } = render(<ChatView chat={chat} label="Chat" />);
    const box = screen.getByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "hello" } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(chat.send).toHaveBeenCalledExactlyOnceWith("hello");
    rerender(<ChatView chat={{ ...chat, busy: true, status: "streaming" }} label="Chat" />);
    fireEvent.keyDown(box, { key: "Escape" });
    expect(chat.stop).toHaveBeenCalledOnce();
  });

  it("closes the composer with the reason when the socket is lost", () => {
    const chat = fakeChat({
      lost: true,
      refusal: { code: "gone", message: "This chat was erased." },
    });
    render(<ChatView chat={chat} label="Chat" />);
    expect((screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement).disabled).toBe(
      true,
    );
    expect(screen.getByText("This chat was erased.")).toBeTruthy();
  });

  it("shows a refusal that the person can dismiss", () => {
    const chat = fakeChat({ refusal: { code: "payload_too_large", message: "Message too large" } });
    render(<ChatView chat={chat} label="Chat" />);
    expect(screen.getByRole("alert").textContent).toContain("Message too large");
    fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(chat.clearRefusal).toHaveBeenCalledOnce();
  });

  it("shows the app's notice for a refusal in place of the alert and the status: one notice, the draft back in the box", () => {
    const refusal = {
      code: "spend_limit",
      message: "Your daily limit",
      details: { limit: "member_daily" },
    };
    const chat = fakeChat({ refusal, returnedDraft: { text: "Try again?", seq: 1 } });
    render(
      <ChatView
        chat={chat}
        label="Chat"
        renderStatus={() => <p>91% of your limit used</p>}
        renderRefusal={(shown) =>
          shown.code === "spend_limit" ? (
            <p role="alert">Stopped by {shown.details?.limit}</p>
          ) : null
        }
      />,
    );
    expect(screen.getAllByRole("alert").map((alert) => alert.textContent)).toEqual([
      "Stopped by member_daily",
    ]);
    expect(screen.queryByText("91% of your limit used")).toBeNull();
    expect((screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement).value).toBe(
      "Try again?",
    );
  });

  it("keeps the default alert for a refusal the app does not word", () => {
    const chat = fakeChat({
      refusal: { code: "conflict", message: "A reply is still being written" },
    });
    render(
      <ChatView
        chat={chat}
        label="Chat"
        renderStatus={() => <p>status line</p>}
        renderRefusal={() => null}
      />,
    );
    expect(screen.getByRole("alert").textContent).toContain("A reply is still being written");
    expect(screen.getByText("status line")).toBeTruthy();
  });

  it("gives every button an accessible name", () => {
    const chat = fakeChat({
      messages: [userMessage("u1", "a"), reply("a1", "one")],
      refusal: { code: "x", message: "No" },
    });
    render(<ChatView chat={chat} label="Chat" regenerate />);
    for (const button of screen.getAllByRole("button")) {
      const name = button.getAttribute("aria-label") ?? button.textContent ?? "";
      expect(name.trim()).not.toBe("");
    }
  });
});

describe("ChatView scrolling", () => {
  it("offers Jump to newest once the person scrolls up, and follows again after it", async () => {
    const chat = fakeChat({ messages: [userMessage("u1", "a"), reply("a1", "one")] });
    const { container } = render(<ChatView chat={chat} label="Chat" />);
    const scroller = container.querySelector(".overflow-y-auto") as HTMLElement;
    Object.defineProperty(scroller, "scrollHeight", { configurable: true, get: () => 2000 });
    Object.defineProperty(scroller, "clientHeight", { configurable: true, get: () => 500 });
    let top = 1499;
    Object.defineProperty(scroller, "scrollTop", {
      configurable: true,
      get: () => top,
      set: (value: number) => {
        top = value;
      },
    });
    expect(screen.queryByRole("button", { name: "Jump to newest" })).toBeNull();
    act(() => {
      scroller.dispatchEvent(new Event("scroll"));
    });
    top = 200;
    act(() => {
      scroller.dispatchEvent(new Event("scroll"));
    });
    const jump = await screen.findByRole("button", { name: "Jump to newest" });
    fireEvent.click(jump);
    await waitFor(() =>
      expect(screen.queryByRole("button", { name: "Jump to newest" })).toBeNull(),
    );
  });
});

describe("ChatView long transcripts", () => {
  const transcript = (turns: number): UIMessage[] =>
    Array.from({ length: turns }, (_, i) => [
      userMessage(`u${i}`, `question ${i}`),
      reply(`a${i}`, `answer ${i}`),
    ]).flat();

  it("opens with the newest messages only and shows the earlier ones a page at a time", () => {
    render(<ChatView chat={fakeChat({ messages: transcript(50) })} label="Chat" />);
    expect(items()).toHaveLength(TRANSCRIPT_WINDOW);
    expect(items().at(-1)?.textContent).toContain("answer 49");
    expect(items()[0]?.textContent).toContain(`question ${50 - TRANSCRIPT_WINDOW / 2}`);
    fireEvent.click(screen.getByRole("button", { name: "Show earlier messages (60)" }));
    expect(items()).toHaveLength(2 * TRANSCRIPT_WINDOW);
    fireEvent.click(screen.getByRole("button", { name: "Show earlier messages (20)" }));
    expect(items()).toHaveLength(100);
    expect(items()[0]?.textContent).toContain("question 0");
    expect(screen.queryByRole("button", { name: /Show earlier/ })).toBeNull();
  });

  it("keeps every message that arrives after opening in view, and a short chat whole", () => {
    const chat = fakeChat({ messages: transcript(30) });
    const { rerender } = render(<ChatView chat={chat} label="Chat" />);
    expect(items()).toHaveLength(TRANSCRIPT_WINDOW);
    const more = [...chat.messages, userMessage("u-new", "new question"), reply("a-new", "new")];
    rerender(<ChatView chat={{ ...chat, messages: more }} label="Chat" />);
    expect(items()).toHaveLength(TRANSCRIPT_WINDOW + 2);
    expect(items().at(-1)?.textContent).toContain("new");
    cleanup();
    render(<ChatView chat={fakeChat({ messages: transcript(5) })} label="Chat" />);
    expect(items()).toHaveLength(10);
    expect(screen.queryByRole("button", { name: /Show earlier/ })).toBeNull();
  });
});
