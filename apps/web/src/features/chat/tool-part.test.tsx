import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type AnyToolPart, readMemoryChange, ToolPartView } from "./tool-part.tsx";

afterEach(cleanup);

const approvalPart = {
  type: "tool-update_project_memory",
  toolCallId: "call_1",
  state: "approval-requested",
  input: { set: { audience: "teams", budget: 5 }, remove: ["old"] },
  approval: { id: "appr_1" },
} as unknown as AnyToolPart;

describe("ToolPartView", () => {
  it("shows the proposed set and remove, and approves through the handler", () => {
    const onRespond = vi.fn();
    render(<ToolPartView part={approvalPart} onRespond={onRespond} />);
    const prompt = screen.getByRole("group", { name: /update the project memory/ });
    expect(prompt.textContent).toContain("audience");
    expect(prompt.textContent).toContain('"teams"');
    expect(prompt.textContent).toContain("old");
    const approve = screen.getByRole("button", { name: "Approve" });
    approve.focus();
    expect(document.activeElement).toBe(approve);
    fireEvent.click(approve);
    expect(onRespond).toHaveBeenCalledExactlyOnceWith({ id: "appr_1", approved: true });
  });

  it("rejects through the same handler with approved false", () => {
    const onRespond = vi.fn();
    render(<ToolPartView part={approvalPart} onRespond={onRespond} />);
    fireEvent.click(screen.getByRole("button", { name: "Reject" }));
    expect(onRespond).toHaveBeenCalledExactlyOnceWith({ id: "appr_1", approved: false });
  });

  it("shows other tool calls with their state and no buttons", () => {
    const part = {
      type: "tool-get_balance",
      toolCallId: "call_2",
      state: "output-available",
      input: {},
      output: { availableMicros: 1 },
    } as unknown as AnyToolPart;
    render(<ToolPartView part={part} onRespond={() => {}} />);
    expect(screen.getByText(/get_balance/).closest("p")?.textContent).toMatch(/done$/);
    expect(screen.queryByRole("button")).toBeNull();
  });

  it("shows an answered memory update as a plain tool call", () => {
    const part = { ...approvalPart, state: "output-denied" } as unknown as AnyToolPart;
    render(<ToolPartView part={part} onRespond={() => {}} />);
    expect(screen.getByText(/rejected/)).toBeTruthy();
    expect(screen.queryByRole("button")).toBeNull();
  });
});

describe("readMemoryChange", () => {
  it("ignores malformed input from the model", () => {
    expect(readMemoryChange({ set: ["x"], remove: [1, "a"] })).toEqual({ set: [], remove: ["a"] });
    expect(readMemoryChange(null)).toEqual({ set: [], remove: [] });
  });
});
