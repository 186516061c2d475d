import type { Payment } from "@parley/shared";
import { cleanup, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingApi } from "../../lib/billing-api.ts";
import { renderInApp } from "../../test/render.tsx";
import { PaymentsTable } from "./payments-table.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const payment = (over: Partial<Payment>): Payment => ({
  id: "pi_1",
  amountMicros: 20_000_000,
  refundedMicros: 0,
  disputedMicros: 0,
  reversedMicros: 0,
  status: "paid",
  source: "checkout",
  receiptUrl: "https://pay.example/receipts/ch_1",
  createdAt: "2026-12-01T10:00:00.000Z",
  ...over,
});

describe("PaymentsTable", () => {
  it("lists each paid top-up with its date, amount, status and receipt", async () => {
    vi.spyOn(billingApi, "payments").mockResolvedValue({
      items: [
        payment({ id: "pi_3", amountMicros: 5_000_000, receiptUrl: null }),
        payment({
          id: "pi_2",
          status: "partially_refunded",
          refundedMicros: 5_000_000,
          receiptUrl: "https://pay.example/receipts/ch_2",
        }),
        payment({ id: "pi_1", status: "refunded", refundedMicros: 20_000_000 }),
      ],
      nextCursor: null,
    });
    await renderInApp(<PaymentsTable orgId="org_1" />);
    const table = await screen.findByRole("table", { name: "Payments, newest first" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => row.textContent)).toEqual([
      expect.stringMatching(/\$5\.00.*Paid.*Not yet available/),
      expect.stringMatching(/\$20\.00.*Partly refunded.*\$5\.00 back.*Receipt/),
      expect.stringMatching(/\$20\.00.*Refunded.*Receipt/),
    ]);
    const link = within(rows[1] as HTMLElement).getByRole("link", { name: /^Receipt/ });
    expect(link.getAttribute("href")).toBe("https://pay.example/receipts/ch_2");
    expect(link.getAttribute("rel")).toBe("noopener noreferrer");
  });

  it("says so when there is no payment yet", async () => {
    vi.spyOn(billingApi, "payments").mockResolvedValue({ items: [], nextCursor: null });
    await renderInApp(<PaymentsTable orgId="org_1" />);
    expect(await screen.findByText("No payments yet")).toBeTruthy();
  });
});
