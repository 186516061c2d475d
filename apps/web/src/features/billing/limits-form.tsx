import type { BillingSummary } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { type FormEvent, type Ref, useState } from "react";
import { toast } from "sonner";
import { FieldMessage, fieldProps, RefusalNote, useRefusal } from "../../components/refusal.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Input } from "../../components/ui/input.tsx";
import type { BillingSettings } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { keys } from "../../lib/query.ts";
import { formFromSettings, type LimitsValues, limitsPatch } from "./limits.ts";

const FIELDS: readonly {
  field: keyof LimitsValues;
  label: string;
  hint: string;
  prefix?: string;
}[] = [
  {
    field: "orgMonthlyLimitMicros",
    label: "Monthly limit for the organization (USD)",
    hint: "Counted from the 1st of each month, UTC. Empty: no limit.",
    prefix: "$",
  },
  {
    field: "memberDailyLimitMicros",
    label: "Daily limit per member (USD)",
    hint: "Counted from 00:00 UTC each day. Empty: no limit.",
    prefix: "$",
  },
  {
    field: "lowBalanceMicros",
    label: "Low-balance alert below (USD)",
    hint: "An alert fires once when the balance falls under this. Empty: no alert.",
    prefix: "$",
  },
  {
    field: "runwayAlertDays",
    label: "Forecast alert: balance lasts under (days)",
    hint: "At the last 7 days' spend rate; fires once per top-up. Empty: no alert.",
  },
  {
    field: "limitWarningPct",
    label: "Warn in the chat at (% of a limit)",
    hint: "Members and end users see a warning at this share of any limit, before it stops a reply. Empty: no warning.",
  },
  {
    field: "alertWebhookUrl",
    label: "Alert webhook URL",
    hint: "Alerts are POSTed here, signed with the Parley-Signature header. Empty: none.",
  },
];

/** The id of the form's first field: "Raise the limit" moves focus there. */
export const LIMITS_FIRST_FIELD = "limit-orgMonthlyLimitMicros";

/**
 * Spend limits, the low-balance threshold and the alert webhook (owners and admins). Up to six
 * decimals of a dollar are taken, so a limit of 0.005 is a limit; empty removes one.
 */
export function LimitsForm({
  orgId,
  settings,
  firstFieldRef,
}: {
  orgId: string;
  settings: BillingSettings;
  firstFieldRef?: Ref<HTMLInputElement>;
}) {
  const queryClient = useQueryClient();
  const [form, setForm] = useState<LimitsValues>(() => formFromSettings(settings));
  const { refusal, refuse, refuseWith, clear, form: formRef, at } = useRefusal();
  const [busy, setBusy] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const result = limitsPatch(form, settings);
    if (!result.ok) {
      refuseWith(result);
      return;
    }
    clear();
    if (Object.keys(result.patch).length === 0) {
      toast("Nothing changed.");
      return;
    }
    setBusy(true);
    try {
      const next = await billingApi.updateBillingSettings(orgId, result.patch);
      setForm(formFromSettings(next));
      queryClient.setQueryData<BillingSummary>(keys.billing(orgId), (old) =>
        old ? { ...old, ...next } : old,
      );
      void queryClient.invalidateQueries({ queryKey: keys.billingAlerts(orgId) });
      toast.success("Limits saved.");
    } catch (caught) {
      refuse(caught);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Card aria-labelledby="limits-title">
      <CardHeader
        id="limits-title"
        title="Limits and alerts"
        description="Replies stop when a limit is reached; alerts fire at 50%, 80% and 100% of each limit."
      />
      <CardBody>
        <form
          ref={formRef}
          id="limits"
          aria-labelledby="limits-title"
          onSubmit={onSubmit}
          noValidate
          className="grid gap-4"
        >
          <div className="grid grid-cols-1 gap-4 md:grid-cols-2">
            {FIELDS.map(({ field, label, hint, prefix }) => {
              const id = `limit-${field}`;
              const problem = at(field);
              return (
                <div key={field} className="grid gap-1.5 text-sm">
                  <label htmlFor={id} className="font-medium">
                    {label}
                  </label>
                  <div className="relative">
                    {prefix ? (
                      <span
                        aria-hidden="true"
                        className="pointer-events-none absolute inset-y-0 left-3 flex items-center text-muted-foreground"
                      >
                        {prefix}
                      </span>
                    ) : null}
                    <Input
                      id={id}
                      ref={field === "orgMonthlyLimitMicros" ? firstFieldRef : undefined}
                      name={field}
                      value={form[field]}
                      className={prefix ? "pl-7" : undefined}
                      inputMode={
                        field === "alertWebhookUrl"
                          ? "url"
                          : field === "runwayAlertDays" || field === "limitWarningPct"
                            ? "numeric"
                            : "decimal"
                      }
                      type={field === "alertWebhookUrl" ? "url" : "text"}
                      autoComplete="off"
                      placeholder={
                        field === "alertWebhookUrl"
                          ? "https://example.com/hooks/parley"
                          : field === "lowBalanceMicros" || field === "runwayAlertDays"
                            ? "No alert"
                            : field === "limitWarningPct"
                              ? "No warning"
                              : "No limit"
                      }
                      {...fieldProps(id, problem, `${id}-hint`)}
                      onChange={(event) => setForm({ ...form, [field]: event.target.value })}
                    />
                  </div>
                  <FieldMessage id={id} message={problem} />
                  <span id={`${id}-hint`} className="text-muted-foreground text-xs">
                    {hint}
                  </span>
                </div>
              );
            })}
          </div>
          <RefusalNote refusal={refusal} fields={FIELDS.map(({ field }) => field)} />
          <div>
            <Button type="submit" variant="primary" disabled={busy}>
              {busy ? "Saving…" : "Save settings"}
            </Button>
          </div>
        </form>
      </CardBody>
    </Card>
  );
}
