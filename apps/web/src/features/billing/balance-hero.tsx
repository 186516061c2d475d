import type { BillingSummary } from "@parley/shared";
import { ChevronDown, Wallet } from "lucide-react";
import { useId, useState } from "react";
import { Button } from "../../components/ui/button.tsx";
import { Card } from "../../components/ui/card.tsx";
import { formatMicros } from "../../lib/money.ts";

/**
 * The balance, large, as Stripe's and OpenRouter's balance cards show it: one figure in dollars
 * and cents (rounded down; a balance under a cent, $0.0042, reads as such), every micro-dollar and
 * what chats in progress hold (a reply's maximum, or a chat's credit lease: returned as it idles)
 * on demand, and the one action that adds credits.
 */
export function BalanceHero({
  summary,
  canManage,
  onTopUp,
}: {
  summary: BillingSummary;
  canManage: boolean;
  onTopUp: () => void;
}) {
  const available = summary.availableMicros;
  // Rounded down: the headline never shows more than can be spent.
  const shown = formatMicros(available, { floor: true });
  const exact = formatMicros(available, { precise: true });
  const low = summary.lowBalanceMicros !== null && available < summary.lowBalanceMicros;
  const empty = available <= 0;
  return (
    <Card aria-labelledby="balance-title" className="relative overflow-hidden">
      <div className="grid gap-5 p-5 sm:p-6">
        <div className="flex items-center gap-2 text-muted-foreground text-sm">
          <Wallet aria-hidden="true" className="size-4" />
          <h2 id="balance-title" className="font-medium">
            Available balance
          </h2>
        </div>
        <div className="grid gap-1">
          <p
            className="break-all font-semibold text-4xl tabular-nums tracking-tight sm:text-5xl"
            data-testid="balance"
          >
            {shown}
          </p>
          {exact !== shown || summary.heldMicros > 0 ? (
            <ExactAmount
              exact={exact}
              heldMicros={summary.heldMicros}
              // Cents hide nothing: only what chats hold is left to say.
              rounded={exact !== shown}
            />
          ) : null}
        </div>
        <Forecast summary={summary} />
        {empty ? (
          <p className="font-medium text-destructive text-sm">
            Out of credits: the assistant stops until credits are added.
          </p>
        ) : low && summary.lowBalanceMicros !== null ? (
          <p className="font-medium text-sm text-warning">
            Below your low-balance alert of{" "}
            {formatMicros(summary.lowBalanceMicros, { precise: true })}.
          </p>
        ) : null}
        <div className="flex flex-wrap items-center gap-3">
          {canManage ? (
            <Button variant="primary" size="lg" onClick={onTopUp}>
              Top up
            </Button>
          ) : (
            <p className="text-muted-foreground text-sm">
              Owners and admins of this organization add credits.
            </p>
          )}
        </div>
      </div>
    </Card>
  );
}

/** The exact balance and what chats hold, behind a button: one figure on the card until asked. */
function ExactAmount({
  exact,
  heldMicros,
  rounded,
}: {
  exact: string;
  heldMicros: number;
  rounded: boolean;
}) {
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <div className="grid justify-items-start gap-1 text-muted-foreground text-sm">
      <button
        type="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen(!open)}
        className="inline-flex items-center gap-1 rounded-sm underline-offset-2 outline-none hover:text-foreground hover:underline focus-visible:ring-2 focus-visible:ring-ring"
      >
        Exact amount
        <ChevronDown
          aria-hidden="true"
          className={
            open ? "size-4 rotate-180 transition-transform" : "size-4 transition-transform"
          }
        />
      </button>
      <div id={id} hidden={!open} className="tabular-nums">
        {rounded ? <p data-testid="balance-exact">Exactly {exact} available.</p> : null}
        {heldMicros > 0 ? (
          <p>
            {formatMicros(heldMicros, { precise: true })} held by chats in progress (returned as
            they finish or go idle).
          </p>
        ) : null}
      </div>
    </div>
  );
}

const dayFormat = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeZone: "UTC" });

/**
 * How long the balance lasts at the last 7 days' spend (the worker's forecast): "Lasts about 12
 * days at the last 7 days' rate ($1.20 a day), until Dec 14", or that nothing is being spent.
 */
export function Forecast({ summary }: { summary: BillingSummary }) {
  const { forecast } = summary;
  if (forecast.daysLeft === null) {
    return (
      <p className="text-muted-foreground text-sm" data-testid="forecast">
        No spend in the last {forecast.windowDays} days: the balance is not running down.
      </p>
    );
  }
  const rate = formatMicros(forecast.dailyRateMicros, { precise: true });
  if (forecast.daysLeft > 365 || forecast.runsOutAt === null) {
    return (
      <p className="text-muted-foreground text-sm" data-testid="forecast">
        Lasts more than a year at the last {forecast.windowDays} days' rate ({rate} a day).
      </p>
    );
  }
  const days =
    forecast.daysLeft < 1
      ? "less than a day"
      : `about ${Math.floor(forecast.daysLeft)} day${Math.floor(forecast.daysLeft) === 1 ? "" : "s"}`;
  const short = summary.runwayAlertDays !== null && forecast.daysLeft < summary.runwayAlertDays;
  return (
    <p
      className={short ? "font-medium text-sm text-warning" : "text-muted-foreground text-sm"}
      data-testid="forecast"
    >
      Lasts {days} at the last {forecast.windowDays} days' rate ({rate} a day), until{" "}
      {dayFormat.format(new Date(forecast.runsOutAt))}.
      {short ? ` Below your ${summary.runwayAlertDays}-day forecast alert.` : ""}
    </p>
  );
}
