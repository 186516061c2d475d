import type { LimitPeriod, LimitRuleInput } from "@parley/shared";
import { type FormEvent, type ReactNode, useState } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Field, Input, Select } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { parseDollars } from "../../lib/money.ts";
import { PER } from "./limit-words.ts";

/** The dollars of a limit as integer micros, or why not. */
export function limitAmount(
  text: string,
): { ok: true; micros: number } | { ok: false; message: string } {
  const parsed = parseDollars(text);
  if (parsed.ok && parsed.micros > 0) return { ok: true, micros: parsed.micros };
  return {
    ok: false,
    message:
      !parsed.ok && parsed.error === "precision"
        ? "Use at most 6 decimal places: amounts are counted in millionths of a dollar"
        : "Enter an amount in dollars above zero, like 50 or 12.50",
  };
}

/**
 * A period and an amount, submitted as one limit (`{ period, amountMicros }`); `before` holds
 * what else the form asks (whose limit). Validation happens here; `save` does the call and
 * throws what the server said.
 */
export function LimitRuleForm({
  idPrefix,
  submitLabel,
  before,
  validate,
  save,
  initialPeriod = "month",
}: {
  idPrefix: string;
  /** The period it starts at (a link to one limit fills it in). */
  initialPeriod?: LimitPeriod;
  submitLabel: string;
  before?: ReactNode;
  /** What else must hold before saving: a message when it does not. */
  validate?: () => string | null;
  save: (input: LimitRuleInput) => Promise<void>;
}) {
  const [period, setPeriod] = useState<LimitPeriod>(initialPeriod);
  const [amount, setAmount] = useState("");
  const [invalid, setInvalid] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setError(null);
    const other = validate?.() ?? null;
    const parsed = limitAmount(amount);
    if (other !== null || !parsed.ok) {
      setInvalid(other ?? (parsed.ok ? "" : parsed.message));
      document.getElementById(`${idPrefix}-amount`)?.focus();
      return;
    }
    setInvalid(null);
    if (!parsed.ok) return;
    setBusy(true);
    try {
      await save({ period, amountMicros: parsed.micros });
      setAmount("");
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form onSubmit={onSubmit} noValidate className="grid gap-3">
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-3">
        {before}
        <Field label="Period">
          <Select
            id={`${idPrefix}-period`}
            value={period}
            onChange={(event) => setPeriod(event.target.value as LimitPeriod)}
          >
            {(["day", "week", "month"] as const).map((value) => (
              <option key={value} value={value}>
                {PER[value]}
              </option>
            ))}
          </Select>
        </Field>
        <Field label="Amount (USD)">
          <Input
            id={`${idPrefix}-amount`}
            value={amount}
            inputMode="decimal"
            autoComplete="off"
            placeholder="50"
            aria-invalid={invalid !== null}
            aria-describedby={invalid ? `${idPrefix}-amount-error` : undefined}
            onChange={(event) => setAmount(event.target.value)}
          />
        </Field>
      </div>
      {invalid ? (
        <span id={`${idPrefix}-amount-error`} role="alert" className="text-destructive text-xs">
          {invalid}
        </span>
      ) : null}
      <ErrorNote error={error} />
      <div>
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </Button>
      </div>
    </form>
  );
}
