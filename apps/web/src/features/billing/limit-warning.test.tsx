import type { LimitState, LimitStatus } from "@parley/shared";
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

const limit = (over: Partial<LimitState>): LimitState => ({
  limit: "member_daily",
  period: "day",
  limitMicros: 5_000_000,
  spentMicros: 4_200_000,
  resetsAt: "2026-12-03T00:00:00.000Z",
  raisedBy: "admins",
  warning: true,
  ...over,
});
const status = (limits: LimitState[]): LimitStatus => ({ warningPct: 80, limits });

describe("LimitWarning", () => {
  it("warns of the most-used limit past the share, with its reset and who can raise it", async () => {
    const read = vi.spyOn(api, "sessionLimits").mockResolvedValue(
      status([
        limit({}),
        limit({
          limit: "project_weekly",
          period: "week",
          limitMicros: 10_000_000,
          spentMicros: 9_100_000,
        }),
        limit({ limit: "org_monthly", period: "month", spentMicros: 4_990_000, warning: false }),
      ]),
    );
    await renderInApp(<LimitWarning sessionId="ses_1" />);
    const warning = await screen.findByTestId("limit-warning");
    expect(warning.textContent).toBe(
      "You have used 91% of this project's weekly limit ($9.10 of $10.00). It resets on Monday at 00:00 UTC; an owner or admin can raise it.",
    );
    expect(read).toHaveBeenCalledWith("ses_1");
  });

  it("names a member's own limit, which they raise themselves", async () => {
    vi.spyOn(api, "sessionLimits").mockResolvedValue(
      status([limit({ limit: "own_monthly", period: "month", raisedBy: "you" })]),
    );
    await renderInApp(<LimitWarning sessionId="ses_1" />);
    expect((await screen.findByTestId("limit-warning")).textContent).toBe(
      "You have used 84% of the monthly limit you set yourself ($4.20 of $5.00). It resets on the 1st of the month (UTC); you can raise it in Billing.",
    );
  });

  it("says nothing while no limit is past the share", async () => {
    const read = vi
      .spyOn(api, "sessionLimits")
      .mockResolvedValue(status([limit({ warning: false })]));
    await renderInApp(<LimitWarning sessionId="ses_1" />);
    await waitFor(() => expect(read).toHaveBeenCalled());
    await new Promise((r) => setTimeout(r, 20));
    expect(screen.queryByTestId("limit-warning")).toBeNull();
  });

  it("tells an owner or admin they can raise a member limit themselves", async () => {
    session.role = "admin";
    vi.spyOn(api, "sessionLimits").mockResolvedValue(
      status([limit({ limitMicros: 1_000, spentMicros: 1_000 })]),
    );
    await renderInApp(<LimitWarning sessionId="ses_1" />);
    expect((await screen.findByTestId("limit-warning")).textContent).toBe(
      "You have used 100% of your daily limit ($0.001 of $0.001). It resets at 00:00 UTC; you can raise it in Billing.",
    );
    session.role = "member";
  });
});
