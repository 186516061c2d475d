import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ApiError } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { describedText } from "../../test/refusal.ts";
import { renderInApp } from "../../test/render.tsx";
import { TopUpDialog, TopUpForm, topUpAmount } from "./top-up.tsx";

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
});

describe("TopUpDialog", () => {
  it("starts on a quick amount and can be closed with its Close button", async () => {
    const onOpenChange = vi.fn();
    await renderInApp(<TopUpDialog orgId="org_1" open onOpenChange={onOpenChange} />);
    const dialog = await screen.findByRole("dialog", { name: "Top up credits" });
    expect(within(dialog).getByRole("button", { name: "$25" }).getAttribute("aria-pressed")).toBe(
      "true",
    );
    fireEvent.click(within(dialog).getByRole("button", { name: "Close" }));
    expect(onOpenChange).toHaveBeenCalledWith(false);
  });
});

describe("TopUpForm", () => {
  it("shows the $5 minimum before anything is sent, and refuses less without calling the API", async () => {
    const checkout = vi.spyOn(billingApi, "checkout");
    await renderInApp(<TopUpForm orgId="org_1" redirect={vi.fn()} />);
    const form = screen.getByRole("form", { name: "Top up credits" });
    const amount = within(form).getByLabelText("Amount in US dollars");
    expect(form.textContent).toMatch(/Minimum \$5\.00, maximum \$1,000\.00/);
    fireEvent.change(amount, { target: { value: "4.99" } });
    fireEvent.click(within(form).getByRole("button", { name: "Top up" }));
    await waitFor(() =>
      expect(describedText(amount)).toMatch(/^The minimum top-up is \$5\.00\. Minimum/),
    );
    expect(amount.getAttribute("aria-invalid")).toBe("true");
    fireEvent.change(amount, { target: { value: "20.005" } });
    fireEvent.click(within(form).getByRole("button", { name: "Top up" }));
    await waitFor(() => expect(describedText(amount)).toMatch(/whole cents/));
    expect(checkout).not.toHaveBeenCalled();
  });

  it("sends a quick amount to Checkout and goes to Stripe's page", async () => {
    const checkout = vi
      .spyOn(billingApi, "checkout")
      .mockResolvedValue({ id: "cs_1", url: "https://checkout.stripe.test/cs_1" });
    const redirect = vi.fn();
    await renderInApp(<TopUpForm orgId="org_1" redirect={redirect} />);
    fireEvent.click(screen.getByRole("button", { name: "$25" }));
    expect(screen.getByRole("button", { name: "$25" }).getAttribute("aria-pressed")).toBe("true");
    fireEvent.click(screen.getByRole("button", { name: "Top up" }));
    await waitFor(() => expect(redirect).toHaveBeenCalledWith("https://checkout.stripe.test/cs_1"));
    expect(checkout).toHaveBeenCalledWith("org_1", 25_000_000);
  });

  it("shows the worker's refusal at the amount when its bounds differ", async () => {
    vi.spyOn(billingApi, "checkout").mockRejectedValue(
      new ApiError(
        "invalid_request",
        "amountMicros: must be between 10000000 and 1000000000",
        400,
        "amountMicros",
      ),
    );
    await renderInApp(<TopUpForm orgId="org_1" redirect={vi.fn()} />);
    fireEvent.click(screen.getByRole("button", { name: "Top up" }));
    const amount = screen.getByLabelText("Amount in US dollars");
    await waitFor(() =>
      expect(describedText(amount)).toMatch(/^Must be between 10000000 and 1000000000\. /),
    );
  });
});

describe("topUpAmount", () => {
  it("takes whole cents within the bounds", () => {
    expect(topUpAmount("5")).toEqual({ ok: true, micros: 5_000_000 });
    expect(topUpAmount("$1,000")).toEqual({ ok: true, micros: 1_000_000_000 });
    expect(topUpAmount("1000.01")).toMatchObject({ ok: false, message: /most you can add/ });
    expect(topUpAmount("")).toMatchObject({ ok: false, message: /Enter an amount/ });
  });
});
