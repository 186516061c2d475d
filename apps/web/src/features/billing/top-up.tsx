import { type FormEvent, type Ref, useId, useRef, useState } from "react";
import { FieldMessage, fieldProps, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Dialog, DialogContent } from "../../components/ui/dialog.tsx";
import { Input } from "../../components/ui/input.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros, parseDollars } from "../../lib/money.ts";

/**
 * The checkout bounds of the worker's configuration (`CHECKOUT_MIN_MICROS`/`CHECKOUT_MAX_MICROS`
 * in wrangler.jsonc: $5 and $1,000). Checked here so the reader meets them as a sentence before
 * Stripe is involved; the worker still decides, and its refusal shows if a deployment differs.
 */
export const TOP_UP_MIN_MICROS = 5_000_000;
export const TOP_UP_MAX_MICROS = 1_000_000_000;
const QUICK_AMOUNTS = [10, 25, 50];

/** Why a typed top-up cannot be sent, or its micros. */
export function topUpAmount(
  text: string,
): { ok: true; micros: number } | { ok: false; message: string } {
  const parsed = parseDollars(text);
  if (!parsed.ok) {
    return {
      ok: false,
      message:
        parsed.error === "empty"
          ? "Enter an amount to add."
          : "Enter an amount in dollars, like 20 or 20.50.",
    };
  }
  const { micros } = parsed;
  if (micros % 10_000 !== 0)
    return { ok: false, message: "Top-ups are in whole cents, like 20.50." };
  if (micros < TOP_UP_MIN_MICROS) {
    return { ok: false, message: `The minimum top-up is ${formatMicros(TOP_UP_MIN_MICROS)}.` };
  }
  if (micros > TOP_UP_MAX_MICROS) {
    return {
      ok: false,
      message: `The most you can add at once is ${formatMicros(TOP_UP_MAX_MICROS)}.`,
    };
  }
  return { ok: true, micros };
}

/**
 * The top-up form: an amount (or a quick amount), checked against the bounds before the API is
 * asked, then Stripe Checkout. Credits arrive by Stripe's webhook after payment, not here.
 */
export function TopUpForm({
  orgId,
  redirect = (url) => window.location.assign(url),
  amountRef,
}: {
  orgId: string;
  amountRef?: Ref<HTMLInputElement>;
  /** Where the browser goes for Checkout (tests pass a spy). */
  redirect?: (url: string) => void;
}) {
  const [amount, setAmount] = useState("25");
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);
  const inputId = useId();
  // The API names the amount `amountMicros`; the form's own check says it in dollars.
  const problem = at("amountMicros");

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const checked = topUpAmount(amount);
    if (!checked.ok) {
      refuseWith({ field: "amountMicros", message: checked.message });
      return;
    }
    clear();
    setBusy(true);
    try {
      const { url } = await billingApi.checkout(orgId, checked.micros);
      redirect(url);
    } catch (caught) {
      refuse(caught);
      setBusy(false);
    }
  }

  return (
    <form
      ref={form}
      aria-label="Top up credits"
      onSubmit={onSubmit}
      noValidate
      className="grid gap-4"
    >
      <fieldset className="grid gap-2">
        <legend className="font-medium text-sm">Quick amounts</legend>
        <div className="flex flex-wrap gap-2">
          {QUICK_AMOUNTS.map((dollars) => {
            const text = String(dollars);
            return (
              <Button
                key={dollars}
                size="sm"
                aria-pressed={amount.trim() === text}
                // The chosen amount reads as chosen, not only to a screen reader.
                className="aria-pressed:border-primary aria-pressed:bg-primary aria-pressed:text-primary-foreground"
                onClick={() => {
                  setAmount(text);
                  clear();
                }}
              >
                ${dollars}
              </Button>
            );
          })}
        </div>
      </fieldset>
      <div className="grid gap-1.5 text-sm">
        <label htmlFor={inputId} className="font-medium">
          Amount in US dollars
        </label>
        <div className="relative">
          <span
            aria-hidden="true"
            className="pointer-events-none absolute inset-y-0 left-3 flex items-center text-muted-foreground"
          >
            $
          </span>
          <Input
            id={inputId}
            ref={amountRef}
            name="amount"
            inputMode="decimal"
            autoComplete="off"
            className="pl-7"
            value={amount}
            {...fieldProps(inputId, problem, `${inputId}-hint`)}
            onChange={(event) => setAmount(event.target.value)}
          />
        </div>
        <span id={`${inputId}-hint`} className="text-muted-foreground text-xs">
          Minimum {formatMicros(TOP_UP_MIN_MICROS)}, maximum {formatMicros(TOP_UP_MAX_MICROS)}. Paid
          by card through Stripe.
        </span>
        <FieldMessage id={inputId} message={problem} />
      </div>
      <RefusalNote refusal={refusal} fields={["amountMicros"]} />
      <Button type="submit" variant="primary" disabled={busy}>
        {busy ? "Opening Checkout…" : "Top up"}
      </Button>
    </form>
  );
}

/** The top-up form in a dialog, opened by the balance's "Top up" (or `#top-up` in the address). */
export function TopUpDialog({
  orgId,
  open,
  onOpenChange,
}: {
  orgId: string;
  open: boolean;
  onOpenChange: (open: boolean) => void;
}) {
  const amount = useRef<HTMLInputElement>(null);
  return (
    <Dialog open={open} onOpenChange={onOpenChange}>
      <DialogContent
        // Focus the amount, not the first quick amount: most people type their own.
        onOpenAutoFocus={(event) => {
          event.preventDefault();
          amount.current?.focus();
          amount.current?.select();
        }}
        title="Top up credits"
        description="You pay on Stripe's page; the credits appear here as soon as Stripe confirms it."
      >
        <TopUpForm orgId={orgId} amountRef={amount} />
      </DialogContent>
    </Dialog>
  );
}
