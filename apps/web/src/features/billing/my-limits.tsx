import type { LimitPeriod } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { ErrorNote, Loading } from "../../components/ui/states.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { LimitRuleForm } from "./limit-rule-form.tsx";
import { limitName, PER, RESETS } from "./limit-words.ts";
import { SpendMeter } from "./limits-summary.tsx";

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * The limits on the signed-in member's own calls (every member sees this): how much of each is
 * spent, when it resets and who can raise it; and a limit they set on themselves, which only
 * adds a cap (it can lower what they may spend, never raise it past an admin's).
 */
export function MyLimits({
  orgId,
  period,
}: {
  orgId: string;
  /** The period the form starts at (the chat's "Change your limit" names the one that stopped). */
  period?: LimitPeriod;
}) {
  const queryClient = useQueryClient();
  const status = useQuery({
    queryKey: keys.myLimits(orgId),
    queryFn: () => billingApi.myLimits(orgId),
  });
  const [removeError, setRemoveError] = useState<unknown>(null);
  const changed = () => queryClient.invalidateQueries({ queryKey: keys.billing(orgId) });

  async function removeOwn(period: "day" | "week" | "month") {
    setRemoveError(null);
    try {
      await billingApi.setLimit(orgId, { kind: "me" }, { period, amountMicros: null });
      await changed();
      toast.success("Your limit is removed.");
    } catch (caught) {
      setRemoveError(caught);
    }
  }

  const limits = status.data?.limits ?? [];
  return (
    <Card aria-labelledby="my-limits-title">
      <CardHeader
        id="my-limits-title"
        title="Your limits"
        description="What stops your replies, and how much of each you have used."
      />
      <CardBody className="grid gap-4">
        {status.isPending ? (
          <Loading label="Loading your limits…" lines={2} />
        ) : status.isError ? (
          <ErrorNote error={status.error} retry={() => void status.refetch()} />
        ) : limits.length === 0 ? (
          <p className="text-muted-foreground text-sm">No limit applies to your replies.</p>
        ) : (
          <ul className="grid gap-4" aria-label="Your limits">
            {limits.map((limit) => {
              const words = `${formatMicros(limit.spentMicros, { precise: true })} of ${formatMicros(
                limit.limitMicros,
                { precise: true },
              )} ${PER[limit.period]}. Resets ${RESETS[limit.period]}; ${
                limit.raisedBy === "you" ? "you set it" : "an owner or admin can raise it"
              }.`;
              return (
                <li key={limit.limit} className="grid gap-1.5 text-sm">
                  <div className="flex flex-wrap items-center justify-between gap-2">
                    <span className="font-medium">{capitalized(limitName(limit))}</span>
                    {limit.raisedBy === "you" ? (
                      <Button
                        variant="ghost"
                        aria-label={`Remove your own limit ${PER[limit.period]}`}
                        onClick={() => void removeOwn(limit.period)}
                      >
                        Remove
                      </Button>
                    ) : null}
                  </div>
                  <SpendMeter
                    label={capitalized(limitName(limit))}
                    spentMicros={limit.spentMicros}
                    limitMicros={limit.limitMicros}
                    words={words}
                  />
                </li>
              );
            })}
          </ul>
        )}
        <ErrorNote error={removeError} />
        <div className="grid gap-2 border-border border-t pt-4">
          <p className="text-muted-foreground text-sm">
            Set a limit on yourself. It adds to your organization's limits, so it can only lower
            what you may spend.
          </p>
          <LimitRuleForm
            idPrefix="my-limit"
            initialPeriod={period}
            submitLabel="Set my limit"
            save={async (input) => {
              await billingApi.setLimit(orgId, { kind: "me" }, input);
              await changed();
              toast.success("Your limit is saved.");
            }}
          />
        </div>
      </CardBody>
    </Card>
  );
}
