import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Composer } from "./composer.tsx";

afterEach(cleanup);

const box = () => screen.getByRole("textbox", { name: "Message" }) as HTMLTextAreaElement;

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
