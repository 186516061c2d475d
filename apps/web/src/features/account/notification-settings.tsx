import type { OrgNotifications } from "@parley/shared";
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { ErrorNote, Loading } from "../../components/ui/states.tsx";
import { mailApi } from "../../lib/mail-api.ts";
import { keys } from "../../lib/query.ts";

type Choice = "receipts" | "limitAlerts";

const CHOICES: { key: Choice; label: string; hint: string }[] = [
  { key: "receipts", label: "Receipts", hint: "when a top-up is credited" },
  { key: "limitAlerts", label: "Limit alerts", hint: "when a spend limit or low balance fires" },
];

/**
 * Billing mail per org (`GET/PATCH /api/me/notifications`): receipts and limit alerts, which only
 * owners get; other roles see why they cannot switch them on. Mail goes to a verified address.
 */
export function NotificationSettings({ emailVerified }: { emailVerified: boolean }) {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: keys.notifications, queryFn: () => mailApi.notifications() });
  const change = useMutation({
    mutationFn: (input: { orgId: string; key: Choice; value: boolean }) =>
      mailApi.updateNotifications(input.orgId, { [input.key]: input.value }),
    onSuccess: (updated) =>
      queryClient.setQueryData(
        keys.notifications,
        (old: { items: OrgNotifications[] } | undefined) =>
          old
            ? { items: old.items.map((item) => (item.orgId === updated.orgId ? updated : item)) }
            : old,
      ),
  });
  return (
    <Card aria-labelledby="notifications-title">
      <CardHeader
        id="notifications-title"
        title="Billing mail"
        description={
          emailVerified
            ? "Receipts and limit alerts by mail, for the organizations you own."
            : "Receipts and limit alerts by mail, for the organizations you own. They are sent once your address is verified."
        }
      />
      <CardBody className="grid gap-3">
        {list.isPending ? <Loading label="Loading your billing mail…" lines={2} /> : null}
        <ErrorNote error={list.error ?? change.error} />
        {list.data?.items.length === 0 ? (
          <p className="text-muted-foreground text-sm">You do not belong to any organization.</p>
        ) : null}
        <ul className="grid gap-3">
          {list.data?.items.map((org) => (
            <li key={org.orgId} className="grid gap-2 rounded-md border border-border p-3">
              <div className="flex min-w-0 flex-wrap items-baseline justify-between gap-2">
                <span className="min-w-0 truncate font-medium text-sm">{org.orgName}</span>
                <span className="text-muted-foreground text-xs capitalize">{org.role}</span>
              </div>
              {org.available ? (
                <fieldset className="flex flex-wrap gap-x-6 gap-y-2 text-sm">
                  <legend className="sr-only">Billing mail for {org.orgName}</legend>
                  {CHOICES.map((choice) => (
                    <label key={choice.key} className="flex items-center gap-2">
                      <input
                        type="checkbox"
                        className="size-4 accent-primary"
                        checked={org[choice.key]}
                        disabled={change.isPending}
                        onChange={(event) =>
                          change.mutate({
                            orgId: org.orgId,
                            key: choice.key,
                            value: event.currentTarget.checked,
                          })
                        }
                      />
                      <span>
                        {choice.label}{" "}
                        <span className="text-muted-foreground">({choice.hint})</span>
                      </span>
                    </label>
                  ))}
                </fieldset>
              ) : (
                <p className="text-muted-foreground text-sm">
                  Only owners get billing mail for this organization.
                </p>
              )}
            </li>
          ))}
        </ul>
      </CardBody>
    </Card>
  );
}
