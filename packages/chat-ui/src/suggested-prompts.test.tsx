import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SuggestedPrompts } from "./suggested-prompts.tsx";

afterEach(cleanup);

describe("SuggestedPrompts", () => {
  it("lists each suggestion as a button that sends it, shown as typed", () => {
    const send = vi.fn();
    render(
      <SuggestedPrompts suggestions={["Track my order", "<b>Refund</b> policy?"]} send={send} />,
    );
    const list = screen.getByRole("list", { name: "Suggested prompts" });
    const buttons = within(list).getAllByRole("button");
    expect(buttons.map((b) => b.textContent)).toEqual(["Track my order", "<b>Refund</b> policy?"]);
    expect(list.querySelector("b")).toBeNull();
    fireEvent.click(buttons[1] as HTMLElement);
    expect(send).toHaveBeenCalledWith("<b>Refund</b> policy?");
  });

  it("takes two columns only when wide and there is more than one", () => {
    const { rerender } = render(<SuggestedPrompts suggestions={["a", "b"]} send={() => {}} wide />);
    expect(screen.getByRole("list").className).toContain("sm:grid-cols-2");
    rerender(<SuggestedPrompts suggestions={["a"]} send={() => {}} wide />);
    expect(screen.getByRole("list").className).not.toContain("sm:grid-cols-2");
    rerender(<SuggestedPrompts suggestions={["a", "b"]} send={() => {}} />);
    expect(screen.getByRole("list").className).not.toContain("sm:grid-cols-2");
  });

  it("shows nothing without suggestions", () => {
    render(<SuggestedPrompts suggestions={[]} send={() => {}} />);
    expect(screen.queryByRole("list")).toBeNull();
  });
});
