import type { LedgerEntry } from "@parley/shared";
import { cleanup, fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingApi } from "../../lib/billing-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { LedgerTable } from "./ledger-table.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const entry = (
  id: string,
  kind: LedgerEntry["kind"],
  amount: number,
  after: number,
): LedgerEntry => ({
  id,
  kind,
  amountMicros: amount,
  balanceAfterMicros: after,
  reference: null,
  memo: null,
  memoLabel: null,
  createdAt: "2026-12-01T10:00:00.000Z",
  grantId: null,
  grantSource: null,
  grantEvent: null,
});

describe("LedgerTable", () => {
  it("shows balances after each row to the micro-dollar, so small charges do not all read $5.00", async () => {
    vi.spyOn(billingApi, "ledger").mockResolvedValue({
      items: [
        entry("3", "usage", -1_100, 4_997_700),
        entry("2", "usage", -1_200, 4_998_800),
        entry("1", "grant", 5_000_000, 5_000_000),
      ],
      nextCursor: null,
    });
    await renderInApp(<LedgerTable orgId="org_1" />);
    const table = await screen.findByRole("table", { name: "Ledger entries, newest first" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => row.lastElementChild?.textContent)).toEqual([
      "$4.9977",
      "$4.9988",
      "$5.00",
    ]);
    expect(rows[0]?.textContent).toMatch(/Usage.*-\$0\.0011/);
    expect(rows[2]?.textContent).toMatch(/Grant.*Free credits.*\+\$5\.00/);
  });

  it("describes a usage entry by its model's or tool's name, never its usage key", async () => {
    vi.spyOn(billingApi, "ledger").mockResolvedValue({
      items: [
        {
          ...entry("2", "usage", -1_000, 4_999_000),
          memo: "tool:tsrc_1:create_ticket",
          memoLabel: "Notes backend · create_ticket",
        },
        { ...entry("1", "topup", 5_000_000, 5_000_000), memo: "Top-up", memoLabel: "Top-up" },
      ],
      nextCursor: null,
    });
    await renderInApp(<LedgerTable orgId="org_1" />);
    const table = await screen.findByRole("table", { name: "Ledger entries, newest first" });
    expect(within(table).getByText("Notes backend · create_ticket")).toBeTruthy();
    expect(table.textContent).not.toContain("tool:tsrc_1");
  });

  it("loads older entries with More entries", async () => {
    const ledger = vi
      .spyOn(billingApi, "ledger")
      .mockResolvedValueOnce({
        items: [entry("2", "topup", 20_000_000, 25_000_000)],
        nextCursor: "2",
      })
      .mockResolvedValueOnce({
        items: [entry("1", "grant", 5_000_000, 5_000_000)],
        nextCursor: null,
      });
    await renderInApp(<LedgerTable orgId="org_1" />);
    await screen.findByText("Top-up");
    fireEvent.click(screen.getByRole("button", { name: "More entries" }));
    await screen.findByText("Grant");
    expect(screen.queryByRole("button", { name: "More entries" })).toBeNull();
    expect(ledger.mock.calls).toEqual([
      ["org_1", undefined],
      ["org_1", "2"],
    ]);
  });
});

describe("LedgerTable on a phone", () => {
  it("lists each entry as a card of labelled values instead of a table wider than the screen", async () => {
    vi.spyOn(window, "matchMedia").mockImplementation(
      (query) =>
        ({
          matches: false, // narrower than every min-width
          media: query,
          addEventListener: () => undefined,
          removeEventListener: () => undefined,
        }) as unknown as MediaQueryList,
    );
    vi.spyOn(billingApi, "ledger").mockResolvedValue({
      items: [entry("1", "usage", -1_100, 4_997_700)],
      nextCursor: null,
    });
    await renderInApp(<LedgerTable orgId="org_1" />);
    const list = await screen.findByRole("list", { name: "Ledger entries, newest first" });
    expect(screen.queryByRole("table")).toBeNull();
    const [card] = within(list).getAllByRole("listitem");
    const labels = within(card as HTMLElement)
      .getAllByRole("term")
      .map((t) => t.textContent);
    const values = within(card as HTMLElement)
      .getAllByRole("definition")
      .map((d) => d.textContent);
    expect(labels).toEqual(["Date", "Kind", "Description", "Amount", "Balance after"]);
    expect(values.slice(1)).toEqual(["Usage", "Assistant replies", "-$0.0011", "$4.9977"]);
  });
});
