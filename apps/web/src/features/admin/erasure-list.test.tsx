import type { Member } from "@parley/shared";
import { act, cleanup, screen, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../../features/members/members-api.ts";
import type { ErasureRequest, ErasureStep } from "../../lib/api.ts";
import { dataRightsApi } from "../../lib/data-rights-api.ts";
import { keys } from "../../lib/query.ts";
import { renderInApp } from "../../test/render.tsx";
import { ErasureList, POLL_MS } from "./erasure-list.tsx";

afterEach(() => {
  cleanup();
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const members: Member[] = [
  {
    userId: "u1",
    email: "olive@example.com",
    name: "Olive Owner",
    role: "owner",
    joinedAt: "2026-11-29T00:00:00.000Z",
  },
  {
    userId: "u3",
    email: "bob@example.com",
    name: "Bob Babbage",
    role: "admin",
    joinedAt: "2026-11-29T00:00:00.000Z",
  },
];

beforeEach(() => {
  vi.spyOn(membersApi, "members").mockResolvedValue({ items: members, nextCursor: null });
});

const NAMES = ["agents", "d1", "ledger", "audit", "stripe", "verify"] as const;
const steps = (settled: number, failedAt?: number): ErasureStep[] =>
  NAMES.map((name, index) => ({
    name,
    status: index === failedAt ? "failed" : index < settled ? "done" : "pending",
    at: null,
    detail: index < settled ? `${index + 1} rows` : null,
  }));

const request = (
  id: string,
  status: ErasureRequest["status"],
  settled: number,
  over: Partial<ErasureRequest> = {},
): ErasureRequest => ({
  id,
  orgId: "org_1",
  status,
  subject: { type: "member", hash: "h_abc" },
  legalBasis: "GDPR Art. 17 (right to erasure)",
  reason: null,
  requestedBy: "u3",
  steps: steps(settled),
  verification: null,
  attempts: 1,
  createdAt: "2026-12-01T10:00:00.000Z",
  updatedAt: "2026-12-01T10:00:00.000Z",
  completedAt: null,
  ...over,
});

describe("ErasureList", () => {
  it("says what each request erased and its steps in words, with no ids in the main text", async () => {
    vi.spyOn(dataRightsApi, "erasureRequests").mockResolvedValue({
      items: [
        request("erasure_2", "running", 2),
        request("erasure_1", "completed", 6, {
          subject: { type: "project", hash: "h_def" },
          requestedBy: "u_gone",
          completedAt: "2026-12-01T10:05:00.000Z",
        }),
      ],
      nextCursor: null,
    });
    const { queryClient } = await renderInApp(<ErasureList orgId="org_1" meId="u1" />);
    act(() => {
      queryClient.setQueryData(keys.erasureLabels("org_1"), { erasure_2: "Ada Lovelace" });
    });
    const region = await screen.findByRole("region", { name: "Erasure requests" });
    const running = await within(region).findByRole("listitem", { name: "Ada Lovelace" });
    const erased = within(region).getByRole("listitem", { name: "Erased project" });

    expect(within(running).getByText("Running")).toBeTruthy();
    expect(running.textContent).toMatch(/by Bob Babbage/);
    expect(erased.textContent).toMatch(/by a former member/);
    expect(within(erased).getByText("Completed")).toBeTruthy();
    const stepList = within(running).getByRole("list", {
      name: "Steps of the erasure of Ada Lovelace",
    });
    expect(
      within(stepList)
        .getAllByRole("listitem")
        .map((item) => item.textContent),
    ).toEqual([
      "Chat transcriptsDone",
      "Account and membershipsDone",
      "Billing ledger (pseudonymised)In progress",
      "Audit log (pseudonymised)Waiting",
      "Payment providerWaiting",
      "Verification scanWaiting",
    ]);
    const bar = within(running).getByRole("progressbar");
    expect(bar.getAttribute("aria-valuenow")).toBe("2");
    expect(bar.getAttribute("aria-valuemax")).toBe("6");
    expect(within(erased).queryByRole("progressbar")).toBeNull();

    // Ids and internal names only inside the support disclosure.
    for (const item of [running, erased]) {
      const details = item.querySelector("details");
      const main = [...item.children]
        .filter((child) => child !== details)
        .map((child) => child.textContent)
        .join(" ");
      expect(main).not.toMatch(/erasure_|h_abc|h_def|\b(agents|d1|audit|stripe|verify)\b/);
    }
    expect(running.querySelector("details")?.textContent).toContain("erasure_2");
    expect(within(running).getByRole("button", { name: "Copy request id" })).toBeTruthy();
  });

  it("polls while a request runs and stops once all are settled", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const list = vi
      .spyOn(dataRightsApi, "erasureRequests")
      .mockResolvedValueOnce({ items: [request("erasure_1", "running", 3)], nextCursor: null })
      .mockResolvedValue({ items: [request("erasure_1", "completed", 6)], nextCursor: null });
    await renderInApp(<ErasureList orgId="org_1" meId="u1" />);
    await screen.findByText("Running");
    await act(() => vi.advanceTimersByTimeAsync(POLL_MS + 100));
    await screen.findByText("Completed");
    expect(list).toHaveBeenCalledTimes(2);
    await act(() => vi.advanceTimersByTimeAsync(POLL_MS * 3));
    expect(list).toHaveBeenCalledTimes(2);
  });

  it("names who filed a request only once every page of members answered, never a former member first", async () => {
    vi.spyOn(dataRightsApi, "erasureRequests").mockResolvedValue({
      items: [request("erasure_1", "completed", 6)],
      nextCursor: null,
    });
    let answerSecondPage: (page: { items: Member[]; nextCursor: null }) => void = () => {};
    const secondPage = new Promise<{ items: Member[]; nextCursor: null }>((resolve) => {
      answerSecondPage = resolve;
    });
    // Bob (who filed it) is on the members' second page, which answers late.
    vi.spyOn(membersApi, "members").mockImplementation((_orgId, cursor) =>
      cursor ? secondPage : Promise.resolve({ items: members.slice(0, 1), nextCursor: "u1" }),
    );
    // Every text the list showed at any moment: a flash a later render replaced is caught too.
    const shown: string[] = [];
    const observer = new MutationObserver(() => shown.push(document.body.textContent ?? ""));
    observer.observe(document.body, { subtree: true, childList: true, characterData: true });
    try {
      const { queryClient } = await renderInApp(<ErasureList orgId="org_1" meId="u1" />);
      await vi.waitFor(() =>
        expect(queryClient.getQueryState([...keys.erasures("org_1"), "pages"])?.status).toBe(
          "success",
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(screen.getByRole("status").textContent).toContain("Loading erasure requests…");

      answerSecondPage({ items: members.slice(1), nextCursor: null });
      const item = await screen.findByRole("listitem", { name: "Erased member" });
      expect(item.textContent).toMatch(/by Bob Babbage/);
      expect(shown.some((text) => text.includes("a former member"))).toBe(false);
    } finally {
      observer.disconnect();
    }
  });

  it("says when there is nothing yet", async () => {
    vi.spyOn(dataRightsApi, "erasureRequests").mockResolvedValue({ items: [], nextCursor: null });
    await renderInApp(<ErasureList orgId="org_1" meId="u1" />);
    expect(await screen.findByText("No erasure requests yet.")).toBeTruthy();
  });
});
