import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Composer } from "./composer.tsx";

afterEach(cleanup);

const box = () => screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement;

/** Stopping ends the reply at once, as the chats do: Send takes Stop's place in the same click. */
function StoppingChat({ onSend }: { onSend: (text: string) => void }) {
  const [busy, setBusy] = useState(true);
  return <Composer busy={busy} onSend={onSend} onStop={() => setBusy(false)} />;
}

describe("Composer", () => {
  it("sends the trimmed draft on Enter and clears the box", () => {
    const onSend = vi.fn();
    render(<Composer busy={false} onSend={onSend} onStop={() => {}} />);
    fireEvent.change(box(), { target: { value: "  hello  " } });
    fireEvent.keyDown(box(), { key: "Enter" });
    expect(onSend).toHaveBeenCalledExactlyOnceWith("hello");
    expect(box().value).toBe("");
  });

  it("does not send on Shift+Enter, nor an empty draft, nor while busy", () => {
    const onSend = vi.fn();
    const { rerender } = render(<Composer busy={false} onSend={onSend} onStop={() => {}} />);
    fireEvent.change(box(), { target: { value: "line one" } });
    fireEvent.keyDown(box(), { key: "Enter", shiftKey: true });
    expect(onSend).not.toHaveBeenCalled();
    expect(box().value).toBe("line one");
    rerender(<Composer busy onSend={onSend} onStop={() => {}} />);
    fireEvent.keyDown(box(), { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
    expect(box().value).toBe("line one");
  });

  it("sends with the Send button", () => {
    const onSend = vi.fn();
    render(<Composer busy={false} onSend={onSend} onStop={() => {}} />);
    const send = screen.getByRole("button", { name: "Send" }) as HTMLButtonElement;
    expect(send.disabled).toBe(true);
    fireEvent.change(box(), { target: { value: "hi" } });
    fireEvent.click(send);
    expect(onSend).toHaveBeenCalledExactlyOnceWith("hi");
  });

  it("stops with Esc and with the Stop button while busy, and not when idle", () => {
    const onStop = vi.fn();
    const { rerender } = render(<Composer busy={false} onSend={() => {}} onStop={onStop} />);
    fireEvent.keyDown(box(), { key: "Escape" });
    expect(onStop).not.toHaveBeenCalled();
    rerender(<Composer busy onSend={() => {}} onStop={onStop} />);
    expect(screen.queryByRole("button", { name: "Send" })).toBeNull();
    fireEvent.keyDown(box(), { key: "Escape" });
    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(onStop).toHaveBeenCalledTimes(2);
  });

  it("only stops when Stop is clicked with a next message typed: nothing is sent, the draft stays", async () => {
    const onSend = vi.fn();
    render(<StoppingChat onSend={onSend} />);
    fireEvent.change(box(), { target: { value: "my next question" } });
    const stop = screen.getByRole("button", { name: "Stop" });
    // A real click: its default action (submitting the form) runs after the handlers.
    stop.click();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(onSend).not.toHaveBeenCalled();
    expect(box().value).toBe("my next question");
    expect(screen.getByRole("button", { name: "Send" })).not.toBe(stop);
  });

  it("keeps the draft on Enter while a reply streams, and says how to send it", () => {
    const onSend = vi.fn();
    const onStop = vi.fn();
    const { rerender } = render(<Composer busy onSend={onSend} onStop={onStop} />);
    fireEvent.change(box(), { target: { value: "next" } });
    fireEvent.keyDown(box(), { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
    expect(onStop).not.toHaveBeenCalled();
    expect(box().value).toBe("next");
    expect(screen.getByRole("status").textContent).toMatch(/kept: send it when this reply ends/);
    rerender(<Composer busy={false} onSend={onSend} onStop={onStop} />);
    expect(screen.queryByRole("status")).toBeNull();
    fireEvent.keyDown(box(), { key: "Enter" });
    expect(onSend).toHaveBeenCalledExactlyOnceWith("next");
  });

  it("does not stop the reply it just sent when Send is double-clicked", () => {
    const onStop = vi.fn();
    const onSend = vi.fn();
    const { rerender } = render(<Composer busy={false} onSend={onSend} onStop={onStop} />);
    fireEvent.change(box(), { target: { value: "hello" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }), { detail: 1 });
    expect(onSend).toHaveBeenCalledOnce();
    rerender(<Composer busy onSend={onSend} onStop={onStop} />);
    // The second click of the double click lands on Stop, which took Send's place.
    fireEvent.click(screen.getByRole("button", { name: "Stop" }), { detail: 2 });
    fireEvent.click(screen.getByRole("button", { name: "Stop" }), { detail: 1 });
    expect(onStop).not.toHaveBeenCalled();
  });

  it("refuses a draft over the server's size limit before sending, in kilobytes", () => {
    const onSend = vi.fn();
    render(<Composer busy={false} onSend={onSend} onStop={() => {}} maxBytes={100} />);
    fireEvent.change(box(), { target: { value: "é".repeat(60) } });
    expect(screen.getByRole("alert").textContent).toMatch(
      /too long to send: 0\.1 KB of at most 0\.1 KB/,
    );
    expect(screen.getByRole("button", { name: "Send" })).toHaveProperty("disabled", true);
    fireEvent.keyDown(box(), { key: "Enter" });
    expect(onSend).not.toHaveBeenCalled();
    fireEvent.change(box(), { target: { value: "é".repeat(50) } });
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("is disabled with its reason when the chat is closed", () => {
    render(
      <Composer
        busy={false}
        onSend={() => {}}
        onStop={() => {}}
        closedReason="This chat was erased."
      />,
    );
    expect(box().disabled).toBe(true);
    const reason = screen.getByText("This chat was erased.");
    expect(box().getAttribute("aria-describedby")).toBe(reason.id);
  });

  it("starts three lines tall and is capped so it scrolls instead of growing forever", () => {
    render(<Composer busy={false} onSend={() => {}} onStop={() => {}} />);
    expect(box().getAttribute("rows")).toBe("3");
    expect(box().className).toContain("min-h-[4.5rem]");
    expect(box().className).toContain("max-h-60");
    expect(box().className).toContain("overflow-y-auto");
  });

  it("takes the height of its content as the draft grows", () => {
    render(<Composer busy={false} onSend={() => {}} onStop={() => {}} />);
    Object.defineProperty(box(), "scrollHeight", { configurable: true, get: () => 168 });
    fireEvent.change(box(), { target: { value: "1\n2\n3\n4\n5\n6\n7" } });
    expect(box().style.height).toBe("168px");
  });
});
