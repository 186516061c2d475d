import type { ToolCall, ToolSource } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { toolsApi } from "../../lib/tools-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { callLines } from "./session-tool-calls.tsx";
import { SourceEditorDialog } from "./source-editor.tsx";
import { blankAction, errorsOfApi, formOf, patchOf } from "./source-form.ts";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const ID = "tsrc_0123456789abcdefghijklmnop";

function httpSource(overrides: Partial<ToolSource> = {}): ToolSource {
  const action = (
    name: string,
    method: "GET" | "POST",
    path: string,
    access: "read" | "write",
  ) => ({
    name,
    ref: `source:${ID}:${name}`,
    description: `The ${name} action`,
    access,
    serverAccess: null,
    inputSchema: { type: "object", properties: { orderId: { type: "string" } } },
    method,
    path,
    usable: true,
  });
  return {
    id: ID,
    orgId: "org_1",
    kind: "http",
    name: "Shop API",
    description: null,
    url: "https://shop.example.com/api",
    priceMicros: 2_500,
    enabled: true,
    credential: { header: "X-Api-Key" },
    access: {},
    tools: [
      action("order_status", "GET", "/orders/{orderId}", "read"),
      action("request_refund", "POST", "/orders/{orderId}/refund", "write"),
    ],
    toolsListedAt: null,
    version: 3,
    health: {
      status: "unknown",
      consecutiveFailures: 0,
      lastError: null,
      lastErrorCode: null,
      lastErrorAt: null,
      lastSuccessAt: null,
    },
    createdAt: "2026-12-06T10:00:00.000Z",
    updatedAt: "2026-12-06T10:00:00.000Z",
    ...overrides,
  };
}

describe("the source editor's form", () => {
  it("sends nothing for an untouched form: a URL, credential or switch sent moves the version", () => {
    const source = httpSource();
    expect(patchOf(source, formOf(source))).toEqual({ ok: true, patch: null });
    const mcp = httpSource({ kind: "mcp", tools: [] });
    expect(patchOf(mcp, formOf(mcp))).toEqual({ ok: true, patch: null });
  });

  it("sends exactly what changed: price, switch, one action edited, one removed, one added", () => {
    const source = httpSource();
    const form = formOf(source);
    expect(form.price).toBe("0.0025");
    form.price = "0.01";
    form.enabled = false;
    const [first] = form.actions;
    if (!first) throw new Error("no action");
    form.actions = [
      { ...first, path: "/v2/orders/{orderId}" },
      { ...blankAction(), name: "cancel_order", description: "Cancel it", method: "DELETE" },
    ];
    const result = patchOf(source, form);
    expect(result).toEqual({
      ok: true,
      patch: {
        priceMicros: 10_000,
        enabled: false,
        actions: [
          {
            name: "order_status",
            description: "The order_status action",
            method: "GET",
            path: "/v2/orders/{orderId}",
            access: "read",
            inputSchema: { type: "object", properties: { orderId: { type: "string" } } },
          },
          {
            name: "cancel_order",
            description: "Cancel it",
            method: "DELETE",
            path: "/",
            access: "write",
            inputSchema: { type: "object", properties: {} },
          },
        ],
      },
    });
  });

  it("replaces or removes the credential, never sending one unasked", () => {
    const source = httpSource();
    const replace = { ...formOf(source), credential: "replace" as const, secret: "k-2" };
    expect(patchOf(source, replace)).toEqual({
      ok: true,
      patch: { credential: { header: "X-Api-Key", value: "k-2" } },
    });
    const remove = { ...formOf(source), credential: "remove" as const };
    expect(patchOf(source, remove)).toEqual({ ok: true, patch: { credential: null } });
    const blank = { ...formOf(source), credential: "replace" as const, header: " " };
    expect(patchOf(source, blank)).toEqual({
      ok: false,
      errors: { header: "Name the header, such as X-Api-Key", secret: "Type the new value" },
    });
  });

  it("puts its own errors on the field: price, schema JSON, a name twice", () => {
    const source = httpSource();
    const form = formOf(source);
    form.price = "1,5";
    const [first, second] = form.actions;
    if (!first || !second) throw new Error("no actions");
    form.actions = [
      { ...first, schema: "{ not json" },
      { ...second, name: "order_status" },
    ];
    const result = patchOf(source, form);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(Object.keys(result.errors).sort()).toEqual([
      "actions.0.inputSchema",
      "actions.1.name",
      "price",
    ]);
    expect(patchOf(source, { ...formOf(source), price: "101" })).toEqual({
      ok: false,
      errors: { price: "At most $100 a call" },
    });
  });

  it("places the API's refusal by its field", () => {
    const refusal = (field?: string) =>
      new ApiError("invalid_request", `${field}: bad`, 400, field);
    expect(errorsOfApi(refusal("url"))).toEqual({ url: "url: bad" });
    expect(errorsOfApi(refusal("priceMicros"))).toEqual({ price: "priceMicros: bad" });
    expect(errorsOfApi(refusal("credential.value"))).toEqual({ secret: "credential.value: bad" });
    expect(errorsOfApi(refusal("actions.1.path"))).toEqual({
      "actions.1.path": "actions.1.path: bad",
    });
    // Several problems at once: each at its control.
    expect(
      errorsOfApi(
        new ApiError("invalid_request", "url: bad", 400, "url", [
          { field: "url", message: "url: bad" },
          { field: "priceMicros", message: "priceMicros: too big" },
          { field: "actions.0.path", message: "actions.0.path: has .." },
        ]),
      ),
    ).toEqual({
      url: "url: bad",
      price: "priceMicros: too big",
      "actions.0.path": "actions.0.path: has ..",
    });
    expect(errorsOfApi(new ApiError("conflict", "The source changed meanwhile", 409))).toEqual({
      form: "The source changed meanwhile",
    });
  });
});

describe("the source editor", () => {
  it("saves a new price, an edited action and a replaced credential in one PATCH", async () => {
    const update = vi.spyOn(toolsApi, "update").mockResolvedValue(httpSource());
    await renderInApp(<SourceEditorDialog source={httpSource()} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit Shop API" }));
    const dialog = await screen.findByRole("dialog");
    // The credential is said to be set, its value is nowhere.
    expect(within(dialog).getByText(/Set: sent as the X-Api-Key header/)).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText(/^Price per call/), {
      target: { value: "0.05" },
    });
    const refund = within(dialog).getByRole("group", { name: "Action 2: request_refund" });
    fireEvent.change(within(refund).getByLabelText("Description"), {
      target: { value: "Refund an order" },
    });
    fireEvent.click(within(dialog).getByLabelText("Replace it"));
    fireEvent.change(within(dialog).getByLabelText("New value"), { target: { value: "k-new" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    const [id, patch] = update.mock.calls[0] ?? [];
    expect(id).toBe(ID);
    expect(Object.keys(patch ?? {}).sort()).toEqual(["actions", "credential", "priceMicros"]);
    expect(patch?.priceMicros).toBe(50_000);
    expect(patch?.credential).toEqual({ header: "X-Api-Key", value: "k-new" });
    expect(patch?.actions?.[1]?.description).toBe("Refund an order");
    await waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("shows the API's refusal next to the field it names, and keeps the dialog open", async () => {
    vi.spyOn(toolsApi, "update").mockRejectedValue(
      new ApiError(
        "invalid_request",
        "actions.0.path: must not contain //, . or .. segments",
        400,
        "actions.0.path",
      ),
    );
    await renderInApp(<SourceEditorDialog source={httpSource()} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit Shop API" }));
    const dialog = await screen.findByRole("dialog");
    const status = within(dialog).getByRole("group", { name: "Action 1: order_status" });
    const path = within(status).getByLabelText(/^Path/);
    fireEvent.change(path, { target: { value: "/orders/../admin" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    const alert = await within(status).findByRole("alert");
    expect(alert.textContent).toContain("must not contain");
    expect(path.getAttribute("aria-describedby")).toBe(alert.id);
    expect(screen.getByRole("dialog")).toBeTruthy();
  });

  it("removes an action and switches the source off", async () => {
    const update = vi.spyOn(toolsApi, "update").mockResolvedValue(httpSource());
    await renderInApp(<SourceEditorDialog source={httpSource()} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit Shop API" }));
    const dialog = await screen.findByRole("dialog");
    fireEvent.click(within(dialog).getByRole("button", { name: "Remove action request_refund" }));
    fireEvent.click(within(dialog).getByLabelText(/^On:/));
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    const patch = update.mock.calls[0]?.[1];
    expect(patch?.enabled).toBe(false);
    expect(patch?.actions?.map((action) => action.name)).toEqual(["order_status"]);
  });
});

describe("a session's tool calls", () => {
  const call = (overrides: Partial<ToolCall>): ToolCall => ({
    id: "tcl_1",
    sourceId: ID,
    toolName: "request_refund",
    sessionId: "ses_1",
    caller: { kind: "member", id: "usr_me" },
    access: "write",
    approvedBy: "usr_me",
    status: "ok",
    errorCode: null,
    durationMs: 1_250,
    requestBytes: 10,
    responseBytes: 20,
    priceMicros: 50_000,
    createdAt: "2026-12-06T10:00:00.000Z",
    ...overrides,
  });

  it("names the source and the approver, says a deleted source and a former member so", () => {
    const lines = callLines(
      [
        call({}),
        call({ id: "tcl_2", approvedBy: "usr_admin", durationMs: 80, priceMicros: 0 }),
        call({ id: "tcl_3", sourceId: "tsrc_gone", approvedBy: "usr_left", status: "timeout" }),
        call({ id: "tcl_4", access: "read", approvedBy: null }),
      ],
      [{ id: ID, name: "Shop API" }],
      [{ userId: "usr_admin", name: "Ada", email: "ada@example.com" }],
      "usr_me",
    );
    expect(lines.map((line) => [line.source, line.approvedBy, line.duration, line.price])).toEqual([
      ["Shop API", "you", "1.3 s", "$0.05"],
      ["Shop API", "Ada", "80 ms", "free"],
      ["a deleted source", "a former member", "1.3 s", "$0.05"],
      ["Shop API", null, "1.3 s", "$0.05"],
    ]);
  });
});

describe("an MCP source's read and write marks", () => {
  const mcp = () =>
    httpSource({
      kind: "mcp",
      url: "https://shop.example.com/mcp",
      access: { request_refund: "write", gone_tool: "read" },
      tools: httpSource().tools.map((tool) => ({ ...tool, method: null, path: null })),
    });

  it("sends the whole record when a mark changes, keeping marks of tools no longer listed", () => {
    const source = mcp();
    const form = formOf(source);
    expect(form.marks).toEqual({ order_status: "server", request_refund: "write" });
    expect(patchOf(source, form)).toEqual({ ok: true, patch: null });
    form.marks = { order_status: "read", request_refund: "server" };
    expect(patchOf(source, form)).toEqual({
      ok: true,
      patch: { access: { order_status: "read", gone_tool: "read" } },
    });
  });

  it("marks a tool in the dialog", async () => {
    const update = vi.spyOn(toolsApi, "update").mockResolvedValue(mcp());
    await renderInApp(<SourceEditorDialog source={mcp()} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit Shop API" }));
    const dialog = await screen.findByRole("dialog");
    fireEvent.change(within(dialog).getByLabelText("order_status"), { target: { value: "write" } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(update).toHaveBeenCalledTimes(1));
    expect(update.mock.calls[0]?.[1]).toEqual({
      access: { order_status: "write", request_refund: "write", gone_tool: "read" },
    });
  });
});
