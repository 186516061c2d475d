import { type AutoTopUp, autoTopUpSettingsSchema } from "@parley/shared";
import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { billingApi } from "../../lib/billing-api.ts";
import { answerEvery, describedText, refusedBody } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { AutoTopUpCard, autoTopUpInput } from "./auto-top-up.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

const state = (over: Partial<AutoTopUp> = {}): AutoTopUp => ({
  enabled: false,
  thresholdMicros: 0,
  amountMicros: 0,
  monthlyCapMicros: 0,
  card: null,
  paused: null,
  monthChargedMicros: 0,
  charges: [],
  ...over,
});

const CARD = {
  brand: "visa",
  last4: "4242",
  expMonth: 3,
  expYear: 2029,
  savedAt: "2026-12-03T10:00:00.000Z",
};

describe("autoTopUpInput", () => {
  const values = { enabled: true, threshold: "5", amount: "20", cap: "100" };
  it("turns dollars into the settings to send", () => {
    expect(autoTopUpInput(values)).toEqual({
      ok: true,
      settings: {
        enabled: true,
        thresholdMicros: 5_000_000,
        amountMicros: 20_000_000,
        monthlyCapMicros: 100_000_000,
      },
    });
  });

  it("names the field to fix", () => {
    expect(autoTopUpInput({ ...values, threshold: "" })).toMatchObject({
      field: "thresholdMicros",
    });
    expect(autoTopUpInput({ ...values, amount: "20.005" })).toMatchObject({
      field: "amountMicros",
      message: expect.stringMatching(/whole cents/),
    });
    expect(autoTopUpInput({ ...values, amount: "0.50" })).toMatchObject({
      field: "amountMicros",
    });
    expect(autoTopUpInput({ ...values, cap: "10" })).toMatchObject({
      field: "monthlyCapMicros",
      message: expect.stringMatching(/at least the amount/),
    });
  });

  it("names every box to fix at once", () => {
    expect(autoTopUpInput({ ...values, threshold: "", cap: "ten" })).toMatchObject({
      ok: false,
      problems: [{ field: "thresholdMicros" }, { field: "monthlyCapMicros" }],
    });
  });
});

describe("AutoTopUpCard", () => {
  it("offers to save a card first, and sends the browser to Stripe for it", async () => {
    vi.spyOn(billingApi, "autoTopUp").mockResolvedValue(state());
    const saveCard = vi
      .spyOn(billingApi, "saveCard")
      .mockResolvedValue({ id: "cs_1", url: "https://stripe.example/setup" });
    const redirect = vi.fn();
    await renderInApp(<AutoTopUpCard orgId="org_1" redirect={redirect} />);
    expect(await screen.findByText("No card saved")).toBeTruthy();
    expect(
      (screen.getByRole("checkbox", { name: /Top up automatically/ }) as HTMLInputElement).disabled,
    ).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Save a card" }));
    await waitFor(() => expect(redirect).toHaveBeenCalledWith("https://stripe.example/setup"));
    expect(saveCard).toHaveBeenCalledWith("org_1");
  });

  it("turns it on with the saved card, and shows the charges", async () => {
    vi.spyOn(billingApi, "autoTopUp").mockResolvedValue(
      state({
        card: CARD,
        charges: [
          {
            id: "auto-topup-3",
            amountMicros: 20_000_000,
            status: "succeeded",
            failureCode: null,
            createdAt: "2026-12-03T11:00:00.000Z",
          },
        ],
      }),
    );
    const set = vi
      .spyOn(billingApi, "setAutoTopUp")
      .mockImplementation(async (_org, settings) => state({ ...settings, card: CARD }));
    await renderInApp(<AutoTopUpCard orgId="org_1" />);
    expect(await screen.findByText(/ending 4242, expires 03\/2029/)).toBeTruthy();
    expect(screen.getByText("Latest automatic charges")).toBeTruthy();
    expect(screen.getByText("Paid")).toBeTruthy();
    fireEvent.click(screen.getByRole("checkbox", { name: /Top up automatically/ }));
    fireEvent.change(screen.getByLabelText("Add (USD)"), { target: { value: "25" } });
    fireEvent.click(screen.getByRole("button", { name: "Save automatic top-up" }));
    await waitFor(() =>
      expect(set).toHaveBeenCalledWith("org_1", {
        enabled: true,
        thresholdMicros: 5_000_000,
        amountMicros: 25_000_000,
        monthlyCapMicros: 100_000_000,
      }),
    );
  });

  it("refuses a cap below the amount without asking the API", async () => {
    vi.spyOn(billingApi, "autoTopUp").mockResolvedValue(state({ card: CARD }));
    const set = vi.spyOn(billingApi, "setAutoTopUp");
    await renderInApp(<AutoTopUpCard orgId="org_1" />);
    fireEvent.change(await screen.findByLabelText("At most per month (USD)"), {
      target: { value: "10" },
    });
    fireEvent.click(screen.getByRole("button", { name: "Save automatic top-up" }));
    const cap = screen.getByLabelText("At most per month (USD)");
    await waitFor(() => expect(describedText(cap)).toMatch(/at least the amount\.$/));
    expect(cap.getAttribute("aria-invalid")).toBe("true");
    expect(set).not.toHaveBeenCalled();
  });

  it("shows every problem of the API's refusal at its box", async () => {
    vi.spyOn(billingApi, "autoTopUp").mockResolvedValue(state({ card: CARD }));
    answerEvery(
      400,
      refusedBody(autoTopUpSettingsSchema, {
        enabled: true,
        thresholdMicros: 0,
        amountMicros: 20_000_000,
        monthlyCapMicros: 10_000_000,
      }),
    );
    await renderInApp(<AutoTopUpCard orgId="org_1" />);
    const threshold = await screen.findByLabelText("When the balance falls below (USD)");
    const cap = screen.getByLabelText("At most per month (USD)");
    fireEvent.click(screen.getByRole("button", { name: "Save automatic top-up" }));
    await waitFor(() => expect(threshold.getAttribute("aria-invalid")).toBe("true"));
    expect(describedText(threshold)).toMatch(/^Must be .*\.$/);
    expect(cap.getAttribute("aria-invalid")).toBe("true");
    expect(describedText(cap)).toBe("Must be at least amountMicros.");
    expect(screen.getByLabelText("Add (USD)").getAttribute("aria-invalid")).toBeNull();
    expect(screen.queryByRole("alert")).toBeNull();
  });

  it("says it is paused, and why", async () => {
    vi.spyOn(billingApi, "autoTopUp").mockResolvedValue(
      state({
        enabled: true,
        thresholdMicros: 5_000_000,
        amountMicros: 20_000_000,
        monthlyCapMicros: 100_000_000,
        card: CARD,
        paused: {
          code: "card_declined",
          message: "The card was declined. Save another card, or turn automatic top-up on again.",
          at: "2026-12-03T11:00:00.000Z",
        },
      }),
    );
    await renderInApp(<AutoTopUpCard orgId="org_1" />);
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toMatch(/paused.*The card was declined/);
  });
});
