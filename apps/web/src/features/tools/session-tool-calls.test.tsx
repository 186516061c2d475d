import type { Member, OrgSummary, Page, ToolCall, ToolSource } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { toolsApi } from "../../lib/tools-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { membersApi } from "../members/members-api.ts";
import { SessionToolCalls } from "./session-tool-calls.tsx";

vi.mock("../../lib/session.tsx", () => ({
  useSession: () => ({
    me: { id: "usr_me", email: "olive@example.com", name: "Olive", createdAt: "x", orgs: [] },
    org: { id: "org_1", name: "Acme", role: "owner", createdAt: "x" } as OrgSummary,
  }),
}));

const SOURCE_ID = "tsrc_0123456789abcdefghijklmnop";

const call = (overrides: Partial<ToolCall> = {}): ToolCall => ({
  id: "tcl_1",
  sourceId: SOURCE_ID,
  toolName: "request_refund",
  sessionId: "ses_1",
  caller: { kind: "member", id: "usr_me" },
  access: "write",
  approvedBy: "usr_ada",
  status: "ok",
  errorCode: null,
  durationMs: 1_250,
  requestBytes: 10,
  responseBytes: 20,
  priceMicros: 50_000,
  createdAt: "2026-12-06T10:00:00.000Z",
  ...overrides,
});

/** The list reads only a source's id and name. */
const source = { id: SOURCE_ID, name: "Shop API" } as ToolSource;

const member = (userId: string, name: string): Member => ({
  userId,
  email: `${name.toLowerCase()}@example.com`,
  name,
  role: "member",
  joinedAt: "2026-12-01T10:00:00.000Z",
});

/** A promise the test answers when it chooses, as a slow API would. */
function later<T>() {
  let answer!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    answer = resolve;
  });
  return { promise, answer };
}

/**
 * Every text the page showed at any moment, so a flash that a later render replaced is still
 * caught (a one-off read after the fact would miss it).
 */
function watchTexts() {
  const seen = new Set<string>();
  const record = () => seen.add(document.body.textContent ?? "");
  const observer = new MutationObserver(record);
  observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  return {
    everShown(text: string) {
      record();
      return [...seen].some((shown) => shown.includes(text));
    },
    stop: () => observer.disconnect(),
  };
}

let watch: ReturnType<typeof watchTexts>;

beforeEach(() => {
  watch = watchTexts();
});

afterEach(() => {
  watch.stop();
  cleanup();
  vi.restoreAllMocks();
});

async function openCalls() {
  const rendered = await renderInApp(<SessionToolCalls sessionId="ses_1" orgId="org_1" />);
  fireEvent.click(screen.getByRole("button", { name: "Tool calls" }));
  return rendered;
}

/** Waits until the calls have answered and the page had time to show them. */
async function callsAnswered(queryClient: Awaited<ReturnType<typeof renderInApp>>["queryClient"]) {
  await waitFor(() =>
    expect(queryClient.getQueryState(["session", "ses_1", "tool-calls", "pages"])?.status).toBe(
      "success",
    ),
  );
  await new Promise((resolve) => setTimeout(resolve, 50));
}

describe("a chat's tool calls", () => {
  it("waits for the org's sources before it names a call's source, never saying it was deleted", async () => {
    vi.spyOn(toolsApi, "sessionCalls").mockResolvedValue({ items: [call()], nextCursor: null });
    const sources = later<{ items: ToolSource[]; nextCursor: string | null }>();
    vi.spyOn(toolsApi, "sources").mockReturnValue(sources.promise);
    vi.spyOn(membersApi, "members").mockResolvedValue({
      items: [member("usr_ada", "Ada")],
      nextCursor: null,
    });
    const { queryClient } = await openCalls();

    await callsAnswered(queryClient);
    expect(screen.getByRole("status").textContent).toContain("Loading tool calls…");

    sources.answer({ items: [source], nextCursor: null });
    const list = await screen.findByRole("list", { name: "Tool calls" });
    expect(list.textContent).toContain("request_refundfrom Shop API");
    expect(list.textContent).toContain("approved by Ada");
    expect(watch.everShown("a deleted source")).toBe(false);
  });

  it("waits for every page of members before it names the approver, never calling them former", async () => {
    vi.spyOn(toolsApi, "sessionCalls").mockResolvedValue({ items: [call()], nextCursor: null });
    vi.spyOn(toolsApi, "sources").mockResolvedValue({ items: [source], nextCursor: null });
    const secondPage = later<Page<Member>>();
    vi.spyOn(membersApi, "members").mockImplementation((_orgId, cursor) =>
      cursor
        ? secondPage.promise
        : Promise.resolve({ items: [member("usr_zed", "Zed")], nextCursor: "usr_zed" }),
    );
    const { queryClient } = await openCalls();

    await callsAnswered(queryClient);
    expect(screen.getByRole("status").textContent).toContain("Loading tool calls…");

    secondPage.answer({ items: [member("usr_ada", "Ada")], nextCursor: null });
    const list = await screen.findByRole("list", { name: "Tool calls" });
    expect(list.textContent).toContain("approved by Ada");
    expect(watch.everShown("a former member")).toBe(false);
  });

  it("says a failed read of the sources, and shows the calls once a retry answers", async () => {
    vi.spyOn(toolsApi, "sessionCalls").mockResolvedValue({ items: [call()], nextCursor: null });
    const sources = vi
      .spyOn(toolsApi, "sources")
      .mockRejectedValueOnce(new ApiError("rate_limited", "Too many requests, try again soon", 429))
      .mockResolvedValue({ items: [source], nextCursor: null });
    vi.spyOn(membersApi, "members").mockResolvedValue({
      items: [member("usr_ada", "Ada")],
      nextCursor: null,
    });
    await openCalls();

    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("Too many requests, try again soon");
    expect(screen.queryByRole("list", { name: "Tool calls" })).toBeNull();

    fireEvent.click(screen.getByRole("button", { name: "Try again" }));
    const list = await screen.findByRole("list", { name: "Tool calls" });
    expect(list.textContent).toContain("from Shop API");
    expect(sources).toHaveBeenCalledTimes(2);
    expect(watch.everShown("a deleted source")).toBe(false);
  });
});
