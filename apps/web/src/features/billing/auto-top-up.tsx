import type { AutoTopUp, AutoTopUpSettingsInput } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { CreditCard } from "lucide-react";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { toast } from "sonner";
import {
  FieldMessage,
  fieldProps,
  ProblemField,
  RefusalNote,
  useRefusal,
} from "../../components/refusal.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { Input } from "../../components/ui/input.tsx";
import { ErrorNote, Loading } from "../../components/ui/states.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { dollarsInput, formatMicros, MICROS_PER_DOLLAR, parseDollars } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { type Problem, type Refusal, refusalOfProblems } from "../../lib/refusal.ts";
import { when } from "./words.ts";

type Values = { enabled: boolean; threshold: string; amount: string; cap: string };

const POLL_MS = 1_500;
const POLL_FOR_MS = 60_000;

/** The form's values for the saved settings; suggested amounts while none are saved. */
export function valuesOf(state: AutoTopUp): Values {
  const saved = state.amountMicros > 0;
  return {
    enabled: state.enabled,
    threshold: saved ? dollarsInput(state.thresholdMicros) : "5",
    amount: saved ? dollarsInput(state.amountMicros) : "20",
    cap: saved ? dollarsInput(state.monthlyCapMicros) : "100",
  };
}

/** The dollar boxes, by the API's name of what each holds (its refusals name these). */
const BOXES = [
  { key: "threshold", field: "thresholdMicros", label: "When the balance falls below (USD)" },
  { key: "amount", field: "amountMicros", label: "Add (USD)" },
  { key: "cap", field: "monthlyCapMicros", label: "At most per month (USD)" },
] as const;

type Checked = { ok: true; settings: AutoTopUpSettingsInput } | ({ ok: false } & Refusal);

/**
 * The settings to send, or every box a person must fix and why (the first is `field` and
 * `message`, named as the API names them; the worker checks again).
 */
export function autoTopUpInput(values: Values): Checked {
  const problems: Problem[] = [];
  const read = (key: "threshold" | "amount" | "cap", field: string, label: string) => {
    const parsed = parseDollars(values[key]);
    if (!parsed.ok || parsed.micros <= 0) {
      problems.push({ field, message: `Enter ${label} in dollars, like 20.` });
      return null;
    }
    if (parsed.micros % 10_000 !== 0) {
      problems.push({ field, message: "Amounts are in whole cents, like 20.50." });
      return null;
    }
    return parsed.micros;
  };
  const threshold = read("threshold", "thresholdMicros", "the balance to top up below");
  const amount = read("amount", "amountMicros", "the amount to add");
  if (amount !== null && amount < MICROS_PER_DOLLAR) {
    problems.push({ field: "amountMicros", message: "The smallest automatic top-up is $1.00." });
  }
  const cap = read("cap", "monthlyCapMicros", "the monthly cap");
  if (cap !== null && amount !== null && cap < amount) {
    problems.push({
      field: "monthlyCapMicros",
      message: "The monthly cap must be at least the amount.",
    });
  }
  const refusal = refusalOfProblems(problems);
  if (refusal || threshold === null || amount === null || cap === null) {
    return { ok: false, ...(refusal ?? { field: null, message: "Check the amounts." }) };
  }
  return {
    ok: true,
    settings: {
      enabled: values.enabled,
      thresholdMicros: threshold,
      amountMicros: amount,
      monthlyCapMicros: cap,
    },
  };
}

const CHARGE_STATUS: Record<
  AutoTopUp["charges"][number]["status"],
  { label: string; tone: "success" | "info" | "danger" }
> = {
  requested: { label: "Charging", tone: "info" },
  succeeded: { label: "Paid", tone: "success" },
  failed: { label: "Failed", tone: "danger" },
};

/**
 * Automatic top-up (owners and admins): a saved card (Stripe Checkout in setup mode), and when the
 * balance falls below a threshold, a charge of a set amount, at most a monthly cap. A failed
 * charge pauses it, said here as an alert, until the card is saved again or it is turned back on.
 */
export function AutoTopUpCard({
  orgId,
  cardReturnedAt = null,
  redirect = (url) => window.location.assign(url),
}: {
  orgId: string;
  /** When the page came back from saving a card: the card is read again until it shows. */
  cardReturnedAt?: number | null;
  /** Where the browser goes to save a card (tests pass a spy). */
  redirect?: (url: string) => void;
}) {
  const queryClient = useQueryClient();
  const query = useQuery({
    queryKey: keys.autoTopUp(orgId),
    queryFn: () => billingApi.autoTopUp(orgId),
    refetchInterval: (q) => {
      const data = q.state.data;
      // A charge in flight: Stripe's answer and its webhook come within seconds.
      if (data?.charges.some((charge) => charge.status === "requested")) return POLL_MS;
      // Back from saving a card: Stripe's webhook keeps it a moment later.
      const waitingForCard =
        cardReturnedAt !== null &&
        Date.now() - cardReturnedAt < POLL_FOR_MS &&
        (data?.card === null || Date.parse(data?.card?.savedAt ?? "") < cardReturnedAt - 60_000);
      return waitingForCard ? POLL_MS : false;
    },
  });
  // A charge paid: the balance, the ledger and the payments are read again.
  const paid = query.data?.charges.filter((charge) => charge.status === "succeeded").length ?? 0;
  const seenPaid = useRef<number | null>(null);
  useEffect(() => {
    if (query.data === undefined) return;
    if (seenPaid.current !== null && paid > seenPaid.current) {
      void queryClient.invalidateQueries({ queryKey: keys.billing(orgId) });
    }
    seenPaid.current = paid;
  }, [paid, query.data, queryClient, orgId]);
  if (query.isPending) {
    return (
      <Card aria-labelledby="auto-top-up-title">
        <CardHeader id="auto-top-up-title" title="Automatic top-up" />
        <CardBody>
          <Loading label="Loading automatic top-up…" lines={3} />
        </CardBody>
      </Card>
    );
  }
  if (query.isError) {
    return (
      <Card aria-labelledby="auto-top-up-title">
        <CardHeader id="auto-top-up-title" title="Automatic top-up" />
        <CardBody>
          <ErrorNote error={query.error} retry={() => void query.refetch()} />
        </CardBody>
      </Card>
    );
  }
  return <AutoTopUpForm key={orgId} orgId={orgId} state={query.data} redirect={redirect} />;
}

function AutoTopUpForm({
  orgId,
  state,
  redirect,
}: {
  orgId: string;
  state: AutoTopUp;
  redirect: (url: string) => void;
}) {
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [values, setValues] = useState<Values>(() => valuesOf(state));
  const { refusal, refuse, refuseWith, clear, form, at } = useRefusal();
  const [busy, setBusy] = useState<"save" | "card" | "remove" | null>(null);
  const { card, paused } = state;

  const saved = (next: AutoTopUp) => {
    queryClient.setQueryData(keys.autoTopUp(orgId), next);
    setValues(valuesOf(next));
    void queryClient.invalidateQueries({ queryKey: keys.billingAlerts(orgId) });
  };

  async function run(kind: "save" | "card" | "remove", work: () => Promise<void>) {
    clear();
    setBusy(kind);
    try {
      await work();
    } catch (caught) {
      refuse(caught);
    } finally {
      setBusy(null);
    }
  }

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const checked = autoTopUpInput(values);
    if (!checked.ok) {
      refuseWith(checked);
      return;
    }
    void run("save", async () => {
      saved(await billingApi.setAutoTopUp(orgId, checked.settings));
      toast.success(
        checked.settings.enabled ? "Automatic top-up is on." : "Automatic top-up saved.",
      );
    });
  }

  const saveCard = () =>
    run("card", async () => {
      const { url } = await billingApi.saveCard(orgId);
      redirect(url);
    });

  const removeCard = async () => {
    const ok = await confirm({
      title: "Remove the saved card?",
      description: "Automatic top-up turns off with it. Top-ups through Checkout still work.",
      confirmLabel: "Remove card",
      destructive: true,
    });
    if (!ok) return;
    await run("remove", async () => {
      saved(await billingApi.removeCard(orgId));
      toast.success("Card removed.");
    });
  };

  return (
    <Card aria-labelledby="auto-top-up-title">
      <CardHeader
        id="auto-top-up-title"
        title="Automatic top-up"
        description="Charges the saved card when the balance runs low, once each time, so work never stalls."
      />
      <CardBody className="grid gap-4">
        {paused ? (
          <div
            role="alert"
            className="rounded-lg border border-destructive/40 bg-destructive/5 p-3 text-sm"
          >
            <p className="font-medium">Automatic top-up is paused</p>
            <p className="text-muted-foreground">{paused.message}</p>
          </div>
        ) : null}
        <div className="flex flex-wrap items-center justify-between gap-3 text-sm">
          <span className="inline-flex items-center gap-2">
            <CreditCard aria-hidden="true" className="size-4 text-muted-foreground" />
            {card ? (
              <span>
                <span className="capitalize">{card.brand}</span> ending {card.last4}, expires{" "}
                {String(card.expMonth).padStart(2, "0")}/{card.expYear}
              </span>
            ) : (
              <span className="text-muted-foreground">No card saved</span>
            )}
          </span>
          <span className="flex gap-2">
            <Button type="button" onClick={() => void saveCard()} disabled={busy !== null}>
              {busy === "card" ? "Opening Stripe…" : card ? "Replace card" : "Save a card"}
            </Button>
            {card ? (
              <Button
                type="button"
                variant="ghost"
                onClick={() => void removeCard()}
                disabled={busy !== null}
              >
                Remove card
              </Button>
            ) : null}
          </span>
        </div>
        <form
          ref={form}
          aria-labelledby="auto-top-up-title"
          onSubmit={onSubmit}
          noValidate
          className="grid gap-4"
        >
          <label className="inline-flex items-center gap-2 text-sm">
            <input
              type="checkbox"
              {...fieldProps("auto-top-up-enabled", at("enabled"))}
              checked={values.enabled}
              disabled={card === null}
              onChange={(event) => setValues({ ...values, enabled: event.target.checked })}
              className="size-4"
            />
            <span className="font-medium">Top up automatically</span>
            {card === null ? (
              <span className="text-muted-foreground text-xs">(save a card first)</span>
            ) : null}
          </label>
          <FieldMessage id="auto-top-up-enabled" message={at("enabled")} />
          <div className="grid grid-cols-1 items-end gap-4 sm:grid-cols-3">
            {BOXES.map(({ key, field, label }) => {
              const id = `auto-top-up-${key}`;
              return (
                <ProblemField key={key} label={label} id={id} message={at(field)}>
                  <Input
                    id={id}
                    value={values[key]}
                    inputMode="decimal"
                    autoComplete="off"
                    {...fieldProps(id, at(field))}
                    onChange={(event) => setValues({ ...values, [key]: event.target.value })}
                  />
                </ProblemField>
              );
            })}
          </div>
          <p className="text-muted-foreground text-xs">
            {formatMicros(state.monthChargedMicros)} charged automatically this month (UTC). Credits
            arrive when Stripe confirms the payment.
          </p>
          <RefusalNote refusal={refusal} fields={["enabled", ...BOXES.map(({ field }) => field)]} />
          <div>
            <Button type="submit" variant="primary" disabled={busy !== null}>
              {busy === "save" ? "Saving…" : "Save automatic top-up"}
            </Button>
          </div>
        </form>
        {state.charges.length > 0 ? (
          <div className="grid gap-2">
            <h3 className="font-medium text-sm">Latest automatic charges</h3>
            <ul className="grid gap-1 text-sm">
              {state.charges.map((charge) => {
                const status = CHARGE_STATUS[charge.status];
                return (
                  <li key={charge.id} className="flex flex-wrap items-center justify-between gap-2">
                    <span className="text-muted-foreground">{when(charge.createdAt)}</span>
                    <span className="inline-flex items-center gap-2">
                      {formatMicros(charge.amountMicros, { precise: true })}
                      <Badge tone={status.tone}>{status.label}</Badge>
                    </span>
                  </li>
                );
              })}
            </ul>
          </div>
        ) : null}
      </CardBody>
    </Card>
  );
}
