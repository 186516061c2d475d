import type { Grant, LedgerEntry } from "@parley/shared";
import { cleanup, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { renderInApp } from "../../test/render.tsx";
import { expiryLabel, GrantsList, grantEventLabel } from "./grants-list.tsx";

afterEach(cleanup);

const grant = (id: string, patch: Partial<Grant>): Grant => ({
  id,
  source: "promotion",
  grantedMicros: 5_000_000,
  remainingMicros: 3_004_900,
  expiresAt: null,
  priority: 50,
  ...patch,
});

describe("GrantsList", () => {
  it("shows each grant's source, what is left of it and its expiry, in draw order", async () => {
    await renderInApp(
      <GrantsList
        grants={[
          grant("grant-2", { expiresAt: "2026-12-31T00:00:00.000Z" }),
          grant("grant-1", { source: "signup", remainingMicros: 1_000_000 }),
        ]}
      />,
    );
    const items = within(await screen.findByTestId("grants")).getAllByRole("listitem");
    expect(items.map((item) => item.textContent)).toEqual([
      "Promotion expires Dec 31, 2026$3.00 of $5.00",
      "Sign-up grant no expiry$1.00 of $5.00",
    ]);
  });

  it("shows nothing without grants", async () => {
    await renderInApp(<GrantsList grants={[]} />);
    expect(screen.queryByTestId("grants")).toBeNull();
  });
});

describe("grant labels", () => {
  it("names a grant's ledger rows, and the expiry day in UTC", () => {
    const entry = (patch: Partial<LedgerEntry>): LedgerEntry => ({
      id: "1",
      kind: "adjustment",
      amountMicros: -1,
      balanceAfterMicros: 0,
      reference: null,
      memo: null,
      memoLabel: null,
      createdAt: "2026-12-01T00:00:00.000Z",
      grantId: null,
      grantSource: null,
      grantEvent: null,
      ...patch,
    });
    expect(grantEventLabel(entry({}))).toBeNull();
    expect(
      grantEventLabel(
        entry({ grantId: "g", grantSource: "monthly_allowance", grantEvent: "expired" }),
      ),
    ).toBe("Monthly allowance expired (unused credits)");
    expect(
      grantEventLabel(entry({ grantId: "g", grantSource: "promotion", grantEvent: "granted" })),
    ).toBe("Promotion");
    expect(expiryLabel("2026-12-31T23:59:00.000Z")).toBe("expires Dec 31, 2026");
  });
});
