import type { LimitPeriod, LimitRule } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { toast } from "sonner";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Field, Select } from "../../components/ui/input.tsx";
import { ErrorNote, Loading } from "../../components/ui/states.tsx";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros } from "../../lib/money.ts";
import { useAllMembers, useAllProjects } from "../../lib/org-lists.ts";
import { keys } from "../../lib/query.ts";
import { memberName } from "../members/member-rules.ts";
import { LimitRuleForm } from "./limit-rule-form.tsx";
import { PER, RESETS } from "./limit-words.ts";

/** Who a rule limits, for the list: the member or project, an own limit marked as such. */
const whoOf = (rule: LimitRule) =>
  rule.subject === "own" ? `${rule.label} (own limit)` : rule.label;

/**
 * Limits on one member or one project, per day, week or month (owners and admins): the list,
 * with a Remove for each, and a form to set one. A member's limit takes the place of the org's
 * daily member limit for them; a project's binds everyone's calls in it. Own limits are listed,
 * and only their member changes them.
 */
export function LimitRules({
  orgId,
  prefill,
}: {
  orgId: string;
  /** Whose limit and which period the form starts at (`member:<id>` or `project:<id>`). */
  prefill?: { target: string; period: LimitPeriod };
}) {
  const queryClient = useQueryClient();
  const rules = useQuery({
    queryKey: keys.limitRules(orgId),
    queryFn: () => billingApi.limitRules(orgId),
  });
  // The same whole lists (and cache) as the members and projects screens and the erasure picker.
  const members = useAllMembers(orgId);
  const projects = useAllProjects(orgId);
  const [target, setTarget] = useState(prefill?.target ?? "");
  const [removeError, setRemoveError] = useState<unknown>(null);

  const changed = () => queryClient.invalidateQueries({ queryKey: keys.billing(orgId) });
  const toTarget = (value: string) => {
    const [kind, id = ""] = value.split(":");
    return { kind: kind === "project" ? ("project" as const) : ("member" as const), id };
  };

  async function remove(rule: LimitRule) {
    setRemoveError(null);
    try {
      await billingApi.setLimit(
        orgId,
        { kind: rule.subject === "project" ? "project" : "member", id: rule.subjectId },
        { period: rule.period, amountMicros: null },
      );
      await changed();
      toast.success("Limit removed.");
    } catch (caught) {
      setRemoveError(caught);
    }
  }

  const items = rules.data?.items ?? [];
  return (
    <Card aria-labelledby="limit-rules-title">
      <CardHeader
        id="limit-rules-title"
        title="Limits on members and projects"
        description="A member's limit replaces the daily limit per member for them; a project's counts everyone's replies in it. Days start at 00:00 UTC, weeks on Monday, months on the 1st."
      />
      <CardBody className="grid gap-4">
        {rules.isPending ? (
          <Loading label="Loading limits…" lines={2} />
        ) : rules.isError ? (
          <ErrorNote error={rules.error} retry={() => void rules.refetch()} />
        ) : items.length === 0 ? (
          <p className="text-muted-foreground text-sm">No limits on single members or projects.</p>
        ) : (
          <ul className="grid gap-2" aria-label="Limits on members and projects">
            {items.map((rule) => (
              <li
                key={`${rule.subject}:${rule.subjectId}:${rule.period}`}
                className="flex flex-wrap items-center justify-between gap-2 rounded-md border border-border px-3 py-2 text-sm"
              >
                <span className="min-w-0">
                  <span className="font-medium">{whoOf(rule)}</span>
                  {rule.subject === "project" ? " (project)" : ""}:{" "}
                  {formatMicros(rule.amountMicros, { precise: true })} {PER[rule.period]}
                  <span className="block text-muted-foreground text-xs">
                    Resets {RESETS[rule.period]}
                  </span>
                </span>
                {rule.subject === "own" ? null : (
                  <Button
                    variant="ghost"
                    aria-label={`Remove the limit on ${whoOf(rule)}, ${PER[rule.period]}`}
                    onClick={() => void remove(rule)}
                  >
                    Remove
                  </Button>
                )}
              </li>
            ))}
          </ul>
        )}
        <ErrorNote error={removeError} />
        <LimitRuleForm
          idPrefix="limit-rule"
          initialPeriod={prefill?.period}
          submitLabel="Set limit"
          before={
            <Field label="On">
              <Select
                id="limit-rule-target"
                value={target}
                required
                onChange={(event) => setTarget(event.target.value)}
              >
                <option value="">Choose a member or project</option>
                <optgroup label="Members">
                  {members.items.map((member) => (
                    <option key={member.userId} value={`member:${member.userId}`}>
                      {memberName(member)}
                    </option>
                  ))}
                </optgroup>
                <optgroup label="Projects">
                  {projects.items.map((project) => (
                    <option key={project.id} value={`project:${project.id}`}>
                      {project.name}
                    </option>
                  ))}
                </optgroup>
              </Select>
            </Field>
          }
          validate={() => (target === "" ? "Choose a member or project for the limit." : null)}
          save={async (input) => {
            await billingApi.setLimit(orgId, toTarget(target), input);
            await changed();
            toast.success("Limit saved.");
          }}
        />
      </CardBody>
    </Card>
  );
}
