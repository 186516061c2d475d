import type { LimitState } from "@parley/shared";
import { cleanup, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api } from "../../lib/api.ts";
import { renderInApp } from "../../test/render.tsx";
import { LimitStop, limitHash, stopSetting } from "./limit-stop.tsx";

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
  session.role = "member";
});

const state = (over: Partial<LimitState>): LimitState => ({
  limit: "member_daily",
  period: "day",
  limitMicros: 5_000_000,
  spentMicros: 4_550_000,
  resetsAt: new Date(Date.now() + 5 * 3_600_000 - 60_000).toISOString(),
  raisedBy: "admins",
  warning: true,
  ...over,
});

describe("stopSetting", () => {
  const who = { manage: true, userId: "usr_me", projectId: "prj_1" };
  it("leads each limit to its own setting, never the org's monthly field for a member's limit", () => {
    const link = (limit: string, manage = true) =>
      stopSetting({ code: "spend_limit", details: { limit } }, { ...who, manage });
    expect(link("member_daily")).toEqual({
      kind: "link",
      label: "Raise your daily limit",
      hash: "limit:member_daily:usr_me",
    });
    expect(link("project_weekly")).toMatchObject({ hash: "limit:project_weekly:prj_1" });
    expect(link("org_monthly")).toMatchObject({
      label: "Raise the monthly limit",
      hash: "limit:org_monthly",
    });
    // A limit one set on oneself is one's own to change, admin or not.
    expect(link("own_weekly", false)).toEqual({
      kind: "link",
      label: "Change your limit",
      hash: "limit:own_weekly",
    });
    expect(link("member_daily", false)).toEqual({
      kind: "note",
      label: "Ask an owner or admin to raise it.",
    });
    expect(stopSetting({ code: "insufficient_credits" }, who)).toMatchObject({ hash: "top-up" });
    expect(limitHash("something_else", who)).toBe("limits");
  });
});

describe("LimitStop", () => {
  it("names the limit that stopped the message, its use and reset, with the button to that setting", async () => {
    session.role = "admin";
    vi.spyOn(api, "sessionLimits").mockResolvedValue({
      warningPct: 80,
      limits: [
        state({ limit: "org_monthly", period: "month", spentMicros: 1, limitMicros: 100 }),
        state({}),
      ],
    });
    await renderInApp(
      <LimitStop
        refusal={{
          code: "spend_limit",
          message: "server words",
          details: { limit: "member_daily", period: "day" },
        }}
        sessionId="ses_1"
        projectId="prj_1"
      />,
    );
    const notice = await screen.findByRole("alert");
    await screen.findByText(/\$4\.55 of \$5\.00 used/);
    expect(notice.textContent).toContain("This message would go over your daily limit.");
    expect(notice.textContent).toContain("It resets at 00:00 UTC (in 5 hours).");
    expect(notice.textContent).toContain("Nothing was sent or charged.");
    const link = screen.getByRole("link", { name: "Raise your daily limit" });
    expect(link.getAttribute("href")).toBe("/billing#limit:member_daily:usr_me");
  });

  it("tells a member who can lift an admin's limit, without a button they cannot use", async () => {
    vi.spyOn(api, "sessionLimits").mockResolvedValue({ warningPct: 80, limits: [state({})] });
    await renderInApp(
      <LimitStop
        refusal={{ code: "spend_limit", message: "x", details: { limit: "member_daily" } }}
        sessionId="ses_1"
      />,
    );
    const notice = await screen.findByRole("alert");
    expect(notice.textContent).toContain("Ask an owner or admin to raise it.");
    expect(screen.queryByRole("link")).toBeNull();
  });
});
