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
  it("shows the proposed change and approves once through the handler", () => {
    const onRespond = vi.fn();
    render(<ToolPartView part={approvalPart} onRespond={onRespond} />);
    const prompt = screen.getByRole("group", { name: /update the project memory/ });
    expect(prompt.textContent).toContain("audience");
    expect(prompt.textContent).toContain('"teams"');
    expect(prompt.textContent).toContain("old");
    const approve = screen.getByRole("button", { name: "Approve" });
    fireEvent.click(approve);
    fireEvent.click(approve);
    fireEvent.click(screen.getByRole("button", { name: "Deny" }));
    expect(onRespond).toHaveBeenCalledExactlyOnceWith({ id: "appr_1", approved: true });
  });

  it("denies with approved false, for any tool asking for approval", () => {
    const onRespond = vi.fn();
    const part = {
      type: "dynamic-tool",
      toolName: "send_email",
      toolCallId: "call_9",
      state: "approval-requested",
      input: { to: "a@b.c" },
      approval: { id: "appr_9" },
    } as unknown as AnyToolPart;
    render(<ToolPartView part={part} onRespond={onRespond} />);
    expect(screen.getByRole("group", { name: /run send_email/ }).textContent).toContain("a@b.c");
    fireEvent.click(screen.getByRole("button", { name: "Deny" }));
    expect(onRespond).toHaveBeenCalledExactlyOnceWith({ id: "appr_9", approved: false });
  });

  it("fits a narrow panel: the title inside the card, long names and every argument wrapping, nothing scrolling sideways", () => {
    const tool = `source:tsrc_${"x".repeat(40)}:request_refund_for_a_very_long_order`;
    const reason = `Changed my mind, ${"the-size-is-wrong-".repeat(8)}`;
    const part = {
      type: "dynamic-tool",
      toolName: tool,
      toolCallId: "call_w",
      state: "approval-requested",
      input: { orderId: "1001", reason },
      approval: { id: "appr_w" },
    } as unknown as AnyToolPart;
    render(<ToolPartView part={part} onRespond={() => undefined} />);
    const card = screen.getByRole("group", { name: /wants to run/ });
    const classes = (element: Element | null | undefined) =>
      (element?.getAttribute("class") ?? "").split(/\s+/);
    // A fieldset is as wide as its widest line unless told otherwise.
    expect(classes(card)).toEqual(expect.arrayContaining(["min-w-0", "max-w-full"]));
    // The title is laid out inside the box (a floated legend), breaking a long tool name.
    const title = card.querySelector("legend");
    expect(classes(title)).toEqual(
      expect.arrayContaining(["float-left", "w-full", "[overflow-wrap:anywhere]"]),
    );
    expect(classes(card)).toContain("[&>legend+*]:clear-both");
    // Every argument is there, wrapped: pre-wrap and breaking anywhere, scrolling only downwards.
    const args = card.querySelector("pre");
    expect(args?.textContent).toContain(reason);
    expect(classes(args)).toEqual(
      expect.arrayContaining([
        "whitespace-pre-wrap",
        "[overflow-wrap:anywhere]",
        "overflow-y-auto",
      ]),
    );
    expect(classes(args)).not.toContain("overflow-auto");
  });

  it("names the tool source that will act, on the card and on its record", () => {
    const part = {
      type: "tool-request_refund",
      toolCallId: "call_7",
      state: "approval-requested",
      input: { orderId: "A-1" },
      approval: { id: "appr_7" },
      toolMetadata: { source: "Shop API", sourceId: "tsrc_1" },
    } as unknown as AnyToolPart;
    const { unmount } = render(<ToolPartView part={part} onRespond={() => {}} />);
    expect(
      screen.getByRole("group", { name: "The assistant wants to run request_refund on Shop API." }),
    ).toBeTruthy();
    unmount();
    const done = {
      ...part,
      state: "output-available",
      output: { ok: true },
      approval: { id: "appr_7", approved: true },
    } as unknown as AnyToolPart;
    const { unmount: unmountDone } = render(
      <ToolPartView part={done} onRespond={() => {}} approver="Ada" />,
    );
    expect(
      screen.getByRole("region", { name: "Approved: request_refund on Shop API" }).textContent,
    ).toContain("Approved by Ada: request_refund on Shop API");
    unmountDone();
    // As the stored transcript keeps it (a reload): the title, without toolMetadata.
    const { toolMetadata: _dropped, ...stored } = part as unknown as Record<string, unknown>;
    render(
      <ToolPartView
        part={{ ...stored, title: "request_refund on Shop API" } as unknown as AnyToolPart}
        onRespond={() => {}}
      />,
    );
    expect(
      screen.getByRole("group", { name: "The assistant wants to run request_refund on Shop API." }),
    ).toBeTruthy();
  });

  it("cannot answer when the chat is closed", () => {
    render(<ToolPartView part={approvalPart} onRespond={() => {}} disabled />);
    expect((screen.getByRole("button", { name: "Approve" }) as HTMLButtonElement).disabled).toBe(
      true,
    );
  });

  it("leaves a record of an answered approval: what was asked, the answer and who gave it", () => {
    const approved = {
      ...approvalPart,
      state: "output-available",
      output: { ok: true },
      approval: { id: "ap_1", approved: true },
    } as unknown as AnyToolPart;
    const { unmount } = render(
      <ToolPartView part={approved} onRespond={() => {}} approver="Ada Lovelace" />,
    );
    const record = screen.getByRole("region", { name: "Approved: update_project_memory" });
    expect(record.textContent).toContain("Approved by Ada Lovelace");
    expect(record.textContent).toContain("Set audience");
    expect(screen.queryByRole("button")).toBeNull();
    unmount();
    const denied = {
      ...approved,
      state: "output-denied",
      approval: { id: "ap_1", approved: false },
    };
    render(<ToolPartView part={denied as AnyToolPart} onRespond={() => {}} approver="Ada" />);
    expect(
      screen.getByRole("region", { name: "Denied: update_project_memory" }).textContent,
    ).toContain("Denied by Ada");
  });

  it.each([
    ["input-streaming", "preparing"],
    ["input-available", "running"],
    ["output-available", "done"],
  ])("shows a %s call as %s, with no buttons", (state, label) => {
    const part = {
      type: "tool-get_balance",
      toolCallId: "call_2",
      state,
      input: {},
      output: { availableMicros: 1 },
    } as unknown as AnyToolPart;
    render(<ToolPartView part={part} onRespond={() => {}} />);
    expect(screen.getByText(/get_balance/).closest("p")?.textContent).toBe(
      `Tool call get_balance: ${label}`,
    );
    expect(screen.queryByRole("button")).toBeNull();
  });

  it("shows a failed call with its error", () => {
    const part = {
      type: "tool-get_balance",
      toolCallId: "call_3",
      state: "output-error",
      input: {},
      errorText: "Balance unavailable",
    } as unknown as AnyToolPart;
    render(<ToolPartView part={part} onRespond={() => {}} />);
    expect(screen.getByText(/get_balance/).closest("p")?.textContent).toContain(
      "failedBalance unavailable",
    );
  });
});

describe("readMemoryChange", () => {
  it("ignores malformed input from the model", () => {
    expect(readMemoryChange({ set: ["x"], remove: [1, "a"] })).toEqual({ set: [], remove: ["a"] });
    expect(readMemoryChange(null)).toEqual({ set: [], remove: [] });
  });
});
