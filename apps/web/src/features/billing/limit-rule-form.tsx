import type { LimitPeriod, LimitRuleInput } from "@parley/shared";
import { type FormEvent, type ReactNode, useState } from "react";
import { fieldProps, ProblemField, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Input, Select } from "../../components/ui/input.tsx";
import { parseDollars } from "../../lib/money.ts";
import { type Problem, refusalOfProblems } from "../../lib/refusal.ts";
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
 * what else the form asks (whose limit: its problem, from `validate`, is said in the form's
 * alert). Validation happens here, every problem at once; `save` does the call and throws what
 * the server said, each of its problems shown at the period or the amount, or in the alert.
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
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const other = validate?.() ?? null;
    const parsed = limitAmount(amount);
    const problems: Problem[] = [
      ...(other === null ? [] : [{ field: null, message: other }]),
      ...(parsed.ok ? [] : [{ field: "amountMicros", message: parsed.message }]),
    ];
    const refused = refusalOfProblems(problems);
    if (refused || !parsed.ok) {
      refuseWith(refused);
      return;
    }
    clear();
    setBusy(true);
    try {
      await save({ period, amountMicros: parsed.micros });
      setAmount("");
    } catch (caught) {
      refuse(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form ref={form} onSubmit={onSubmit} noValidate className="grid gap-3">
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-3">
        {before}
        <ProblemField label="Period" id={`${idPrefix}-period`} message={at("period")}>
          <Select
            id={`${idPrefix}-period`}
            value={period}
            onChange={(event) => setPeriod(event.target.value as LimitPeriod)}
            {...fieldProps(`${idPrefix}-period`, at("period"))}
          >
            {(["day", "week", "month"] as const).map((value) => (
              <option key={value} value={value}>
                {PER[value]}
              </option>
            ))}
          </Select>
        </ProblemField>
        <ProblemField label="Amount (USD)" id={`${idPrefix}-amount`} message={at("amountMicros")}>
          <Input
            id={`${idPrefix}-amount`}
            value={amount}
            inputMode="decimal"
            autoComplete="off"
            placeholder="50"
            onChange={(event) => setAmount(event.target.value)}
            {...fieldProps(`${idPrefix}-amount`, at("amountMicros"))}
          />
        </ProblemField>
      </div>
      <RefusalNote refusal={refusal} fields={["period", "amountMicros"]} />
      <div>
        <Button type="submit" variant="primary" disabled={busy}>
          {busy ? "Saving…" : submitLabel}
        </Button>
      </div>
    </form>
  );
}
