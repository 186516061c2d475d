import type { BillingSummary, UsageReport } from "@parley/shared";
import { cleanup, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../../lib/api.ts";
import { renderInApp } from "../../test/render.tsx";
import { LimitWarning } from "./limit-warning.tsx";

const session = vi.hoisted(() => ({ role: "member" as "owner" | "admin" | "member" }));
vi.mock("../../lib/session.tsx", () => ({
  useSession: () => ({
    org: { id: "org_1", name: "Acme", role: session.role, createdAt: "x" },
    me: { id: "usr_me", email: "me@example.com", name: "Me" },
  }),
  canManage: (org: { role: string } | null) => org?.role === "owner" || org?.role === "admin",
}));

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const summary = (memberDailyLimitMicros: number | null) =>
  ({ memberDailyLimitMicros }) as unknown as BillingSummary;
const spentToday = (priceMicros: number) => ({ totals: { priceMicros } }) as unknown as UsageReport;

describe("LimitWarning", () => {
  it("warns at 80% of the daily member limit, with the reset and who can raise it", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(summary(5_000_000));
    const usage = vi.spyOn(api, "usage").mockResolvedValue(spentToday(4_200_000));
    await renderInApp(<LimitWarning />);
    const warning = await screen.findByTestId("limit-warning");
    expect(warning.textContent).toBe(
      "You have used 84% of your daily limit ($4.20 of $5.00). It resets at 00:00 UTC; an owner or admin can raise it.",
    );
    // Today's own usage, from midnight UTC.
    const [, groupBy, range] = usage.mock.calls[0] ?? [];
    expect(groupBy).toBe("day");
    expect(range).toEqual({
      from: `${new Date().toISOString().slice(0, 10)}T00:00:00Z`,
      memberId: "usr_me",
    });
  });

  it("says nothing under 80%, or with no daily limit", async () => {
    vi.spyOn(api, "billing").mockResolvedValue(summary(5_000_000));
    const usage = vi.spyOn(api, "usage").mockResolvedValue(spentToday(3_999_999));
    await renderInApp(<LimitWarning />);
    await waitFor(() => expect(usage).toHaveBeenCalled());
    expect(screen.queryByTestId("limit-warning")).toBeNull();
    cleanup();
    vi.spyOn(api, "billing").mockResolvedValue(summary(null));
    await renderInApp(<LimitWarning />);
    await new Promise((r) => setTimeout(r, 20));
    expect(screen.queryByTestId("limit-warning")).toBeNull();
  });

  it("tells an owner or admin they can raise it themselves", async () => {
    session.role = "admin";
    vi.spyOn(api, "billing").mockResolvedValue(summary(1_000));
    vi.spyOn(api, "usage").mockResolvedValue(spentToday(1_000));
    await renderInApp(<LimitWarning />);
    expect((await screen.findByTestId("limit-warning")).textContent).toContain(
      "used 100% of your daily limit ($0.001 of $0.001). It resets at 00:00 UTC; you can raise it in Billing.",
    );
    session.role = "member";
  });
});
