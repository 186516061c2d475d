import type { ToolSource } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { toolsApi } from "../../lib/tools-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { SourceCard } from "./source-card.tsx";
import { SourceToolsField } from "./source-tools-field.tsx";
import { dollarsToMicros, healthWords, parseJsonObject, priceWords } from "./source-words.ts";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const SOURCE_ID = "tsrc_0123456789abcdefghijklmnop";
const ref = (name: string) => `source:${SOURCE_ID}:${name}`;

function shopSource(overrides: Partial<ToolSource> = {}): ToolSource {
  const tool = (name: string, access: "read" | "write", description: string) => ({
    name,
    ref: ref(name),
    description,
    access,
    serverAccess: access,
    inputSchema: { type: "object", properties: {} },
    method: null,
    path: null,
    usable: true,
  });
  return {
    id: SOURCE_ID,
    orgId: "org_1",
    kind: "mcp",
    name: "Acme Shop orders",
    description: null,
    url: "https://shop.example.com/mcp",
    priceMicros: 0,
    enabled: true,
    credential: null,
    access: {},
    tools: [
      tool("order_status", "read", "An order's status"),
      tool("request_refund", "write", "Ask for a refund"),
    ],
    toolsListedAt: "2026-12-06T10:00:00.000Z",
    version: 1,
    health: {
      status: "healthy",
      consecutiveFailures: 0,
      lastError: null,
      lastErrorCode: null,
      lastErrorAt: null,
      lastSuccessAt: "2026-12-06T10:00:00.000Z",
    },
    createdAt: "2026-12-06T10:00:00.000Z",
    updatedAt: "2026-12-06T10:00:00.000Z",
    ...overrides,
  };
}

describe("a tool source's card", () => {
  it("lists its tools with their read and write marks, and its health", async () => {
    await renderInApp(<SourceCard source={shopSource()} canManage={false} />);
    const status = screen.getByText("order_status").closest("li") as HTMLElement;
    expect(within(status).getByText("Read")).toBeTruthy();
    const refund = screen.getByText("request_refund").closest("li") as HTMLElement;
    expect(within(refund).getByText("Write · asks first")).toBeTruthy();
    expect(screen.getByText("Healthy")).toBeTruthy();
    // Members read it; nothing to change.
    expect(screen.queryByRole("button", { name: /Delete/ })).toBeNull();
    expect(screen.queryByRole("button", { name: /Refresh/ })).toBeNull();
  });

  it("shows a failing source as such, with its last error's class and never its text", async () => {
    await renderInApp(
      <SourceCard
        source={shopSource({
          health: {
            status: "unhealthy",
            consecutiveFailures: 3,
            lastError: "timeout: The tool did not answer within 15000 ms",
            lastErrorCode: "timeout",
            lastErrorAt: "2026-12-06T10:00:00.000Z",
            lastSuccessAt: null,
          },
        })}
        canManage
      />,
    );
    expect(screen.getByText("Failing (3 calls in a row)")).toBeTruthy();
    expect(screen.getByText(/it took too long to answer \(timeout\)/)).toBeTruthy();
    expect(screen.queryByText(/15000 ms/)).toBeNull();
  });

  it("deletes only after a confirmation, and shows the API's refusal when a profile uses it", async () => {
    const remove = vi
      .spyOn(toolsApi, "remove")
      .mockRejectedValueOnce(
        new ApiError("conflict", "Profiles switch on this source's tools: Shop assistant", 409),
      )
      .mockResolvedValueOnce(undefined);
    await renderInApp(<SourceCard source={shopSource()} canManage />);
    fireEvent.click(screen.getByRole("button", { name: "Delete Acme Shop orders" }));
    const dialog = await screen.findByRole("alertdialog");
    fireEvent.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).toBeNull());
    expect(remove).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole("button", { name: "Delete Acme Shop orders" }));
    fireEvent.click(
      within(await screen.findByRole("alertdialog")).getByRole("button", { name: "Delete source" }),
    );
    await waitFor(() => expect(remove).toHaveBeenCalledWith(SOURCE_ID));
    expect((await screen.findByRole("alert")).textContent).toContain("Shop assistant");
  });

  it("refreshes an MCP server's tools", async () => {
    const refresh = vi.spyOn(toolsApi, "refresh").mockResolvedValue(shopSource());
    await renderInApp(<SourceCard source={shopSource()} canManage />);
    fireEvent.click(screen.getByRole("button", { name: "Refresh tools" }));
    await waitFor(() => expect(refresh).toHaveBeenCalledWith(SOURCE_ID));
  });
});

describe("the profile editor's source tool switches", () => {
  it("switches a source's tool on and off by its ref, keeping the other tools", async () => {
    vi.spyOn(toolsApi, "sources").mockResolvedValue({ items: [shopSource()], nextCursor: null });
    const onChange = vi.fn();
    await renderInApp(
      <SourceToolsField orgId="org_1" tools={["read_project_memory"]} onChange={onChange} />,
    );
    const box = (await screen.findByRole("checkbox", {
      name: /request_refund/,
    })) as HTMLInputElement;
    expect(box.checked).toBe(false);
    fireEvent.click(box);
    expect(onChange).toHaveBeenLastCalledWith(["read_project_memory", ref("request_refund")]);
  });

  it("shows a switched-on tool its source no longer lists, so saving never drops it unseen", async () => {
    vi.spyOn(toolsApi, "sources").mockResolvedValue({ items: [shopSource()], nextCursor: null });
    const onChange = vi.fn();
    await renderInApp(
      <SourceToolsField orgId="org_1" tools={[ref("gone_tool")]} onChange={onChange} />,
    );
    const box = (await screen.findByRole("checkbox", { name: /gone_tool/ })) as HTMLInputElement;
    expect(box.checked).toBe(true);
    fireEvent.click(box);
    expect(onChange).toHaveBeenLastCalledWith([]);
  });
});

describe("source words", () => {
  it("reads prices in dollars exactly, and refuses what is not one", () => {
    expect(dollarsToMicros("")).toBe(0);
    expect(dollarsToMicros("0.01")).toBe(10_000);
    expect(dollarsToMicros("1.000001")).toBe(1_000_001);
    expect(dollarsToMicros("1e3")).toBeNull();
    expect(dollarsToMicros("0.0000001")).toBeNull();
    expect(priceWords(0)).toBe("Free");
    expect(priceWords(2_500)).toBe("$0.0025 a call");
  });

  it("says health and bad JSON plainly", () => {
    expect(healthWords(shopSource().health).label).toBe("Healthy");
    expect(parseJsonObject("[1]")).toEqual({ ok: false, message: "must be a JSON object" });
    expect(parseJsonObject('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
  });
});
