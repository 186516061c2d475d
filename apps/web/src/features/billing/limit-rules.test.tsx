import {
  type LimitRule,
  type LimitState,
  limitRuleSchema,
  type Member,
  type Project,
} from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { membersApi } from "../../features/members/members-api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { orgsApi } from "../../lib/orgs-api.ts";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { ErasureForm } from "../admin/erasure-form.tsx";
import { LimitRules } from "./limit-rules.tsx";
import { MyLimits } from "./my-limits.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const rule = (over: Partial<LimitRule>): LimitRule => ({
  subject: "project",
  subjectId: "prj_1",
  label: "Docs",
  period: "week",
  amountMicros: 25_000_000,
  updatedAt: "2026-12-02T10:00:00.000Z",
  ...over,
});

function orgLists() {
  vi.spyOn(membersApi, "members").mockResolvedValue({
    items: [{ userId: "usr_ada", email: "ada@example.com", name: "Ada", role: "member" } as Member],
    nextCursor: null,
  });
  vi.spyOn(orgsApi, "projects").mockResolvedValue({
    items: [{ id: "prj_1", name: "Docs" } as Project],
    nextCursor: null,
  });
}

describe("LimitRules", () => {
  it("lists members' and projects' limits with their reset, own limits marked and not removable", async () => {
    orgLists();
    vi.spyOn(billingApi, "limitRules").mockResolvedValue({
      items: [
        rule({}),
        rule({
          subject: "member",
          subjectId: "usr_ada",
          label: "Ada",
          period: "day",
          amountMicros: 2_000_000,
        }),
        rule({
          subject: "own",
          subjectId: "usr_bo",
          label: "Bo",
          period: "month",
          amountMicros: 5_000_000,
        }),
      ],
    });
    await renderInApp(<LimitRules orgId="org_1" />);
    const list = await screen.findByRole("list", { name: "Limits on members and projects" });
    const rows = within(list)
      .getAllByRole("listitem")
      .map((li) => li.textContent);
    expect(rows).toEqual([
      "Docs (project): $25.00 per weekResets on Monday at 00:00 UTCRemove",
      "Ada: $2.00 per dayResets at 00:00 UTCRemove",
      "Bo (own limit): $5.00 per monthResets on the 1st of the month (UTC)",
    ]);
  });

  it("sets a limit on the chosen project, and removes one with a null amount", async () => {
    orgLists();
    vi.spyOn(billingApi, "limitRules").mockResolvedValue({ items: [rule({})] });
    const set = vi.spyOn(billingApi, "setLimit").mockResolvedValue({ items: [] });
    await renderInApp(<LimitRules orgId="org_1" />);
    await screen.findByRole("option", { name: "Docs" });
    fireEvent.change(screen.getByLabelText("On"), { target: { value: "project:prj_1" } });
    fireEvent.change(screen.getByLabelText("Period"), { target: { value: "week" } });
    fireEvent.change(screen.getByLabelText("Amount (USD)"), { target: { value: "12.50" } });
    fireEvent.click(screen.getByRole("button", { name: "Set limit" }));
    await waitFor(() =>
      expect(set).toHaveBeenCalledWith(
        "org_1",
        { kind: "project", id: "prj_1" },
        { period: "week", amountMicros: 12_500_000 },
      ),
    );
    fireEvent.click(screen.getByRole("button", { name: "Remove the limit on Docs, per week" }));
    await waitFor(() =>
      expect(set).toHaveBeenLastCalledWith(
        "org_1",
        { kind: "project", id: "prj_1" },
        { period: "week", amountMicros: null },
      ),
    );
  });

  it("refuses an amount that is not dollars above zero, and asks for whom", async () => {
    orgLists();
    vi.spyOn(billingApi, "limitRules").mockResolvedValue({ items: [] });
    const set = vi.spyOn(billingApi, "setLimit").mockResolvedValue({ items: [] });
    await renderInApp(<LimitRules orgId="org_1" />);
    await screen.findByText("No limits on single members or projects.");
    await screen.findByRole("option", { name: "Ada" });
    fireEvent.change(screen.getByLabelText("Amount (USD)"), { target: { value: "5" } });
    fireEvent.click(screen.getByRole("button", { name: "Set limit" }));
    expect((await screen.findByRole("alert")).textContent).toBe(
      "Choose a member or project for the limit.",
    );
    fireEvent.change(screen.getByLabelText("On"), { target: { value: "member:usr_ada" } });
    const amount = screen.getByLabelText("Amount (USD)");
    fireEvent.change(amount, { target: { value: "0" } });
    fireEvent.click(screen.getByRole("button", { name: "Set limit" }));
    await waitFor(() => expect(describedText(amount)).toMatch(/above zero.*\.$/));
    expect(amount.getAttribute("aria-invalid")).toBe("true");
    expect(screen.queryByRole("alert")).toBeNull();
    expect(set).not.toHaveBeenCalled();
  });

  it("offers members past the first page, from the cache the erasure picker reads too", async () => {
    const ada = { userId: "usr_ada", email: "ada@example.com", name: "Ada", role: "member" };
    const bo = { userId: "usr_bo", email: "bo@example.com", name: "Bo", role: "member" };
    const members = vi
      .spyOn(membersApi, "members")
      .mockImplementation(async (_orgId, cursor) =>
        cursor === undefined
          ? { items: [ada as Member], nextCursor: "c1" }
          : { items: [bo as Member], nextCursor: null },
      );
    vi.spyOn(orgsApi, "projects").mockResolvedValue({ items: [], nextCursor: null });
    vi.spyOn(billingApi, "limitRules").mockResolvedValue({ items: [] });
    // Both on one screen, one cache: neither may read the other's shape of the members list.
    await renderInApp(
      <>
        <LimitRules orgId="org_1" />
        <ErasureForm orgId="org_1" orgName="Acme" actorRole="owner" />
      </>,
    );
    const limitTarget = screen.getByLabelText(/^On/);
    await within(limitTarget).findByRole("option", { name: "Bo" });
    expect(within(limitTarget).getByRole("option", { name: "Ada" })).toBeTruthy();
    expect(members).toHaveBeenCalledTimes(2);
    expect(screen.queryByText(/Something went wrong/)).toBeNull();
  });
});

describe("MyLimits", () => {
  const state = (over: Partial<LimitState>): LimitState => ({
    limit: "member_daily",
    period: "day",
    limitMicros: 5_000_000,
    spentMicros: 1_250_000,
    resetsAt: "2026-12-03T00:00:00.000Z",
    raisedBy: "admins",
    warning: false,
    ...over,
  });

  it("shows each limit on one's calls with a meter, and sets and removes one's own", async () => {
    vi.spyOn(billingApi, "myLimits").mockResolvedValue({
      warningPct: 80,
      limits: [
        state({}),
        state({ limit: "own_week", period: "week", raisedBy: "you", limitMicros: 2_000_000 }),
      ],
    });
    const set = vi.spyOn(billingApi, "setLimit").mockResolvedValue({ items: [] });
    await renderInApp(<MyLimits orgId="org_1" />);
    const meters = await screen.findAllByRole("progressbar");
    expect(
      meters.map((m) => [m.getAttribute("aria-label"), m.getAttribute("aria-valuenow")]),
    ).toEqual([
      ["Your daily limit", "25"],
      ["The weekly limit you set yourself", "63"],
    ]);
    expect(meters[0]?.getAttribute("aria-valuetext")).toBe(
      "$1.25 of $5.00 per day. Resets at 00:00 UTC; an owner or admin can raise it.",
    );
    fireEvent.change(screen.getByLabelText("Period"), { target: { value: "day" } });
    fireEvent.change(screen.getByLabelText("Amount (USD)"), { target: { value: "3" } });
    fireEvent.click(screen.getByRole("button", { name: "Set my limit" }));
    await waitFor(() =>
      expect(set).toHaveBeenCalledWith(
        "org_1",
        { kind: "me" },
        { period: "day", amountMicros: 3_000_000 },
      ),
    );
    fireEvent.click(screen.getByRole("button", { name: "Remove your own limit per week" }));
    await waitFor(() =>
      expect(set).toHaveBeenLastCalledWith(
        "org_1",
        { kind: "me" },
        { period: "week", amountMicros: null },
      ),
    );
  });

  it("shows both problems of the API's refusal of one's own limit, each at its field", async () => {
    vi.spyOn(billingApi, "myLimits").mockResolvedValue({ warningPct: 80, limits: [] });
    answerEvery(400, refusedBody(limitRuleSchema, { period: "year", amountMicros: 0 }));
    await renderInApp(<MyLimits orgId="org_1" />);
    const period = await screen.findByLabelText("Period");
    const amount = screen.getByLabelText("Amount (USD)");
    fireEvent.change(amount, { target: { value: "3" } });
    fireEvent.click(screen.getByRole("button", { name: "Set my limit" }));
    await waitFor(() => expect(period.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(period)).toBe("Must be day, week or month.");
    expect(amount.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(amount)).toMatch(/^Must be from .*\.$/);
    expect(screen.queryByRole("alert")).toBeNull();
  });
});
