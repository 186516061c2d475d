import type { ActivityItem, UsageGroupBy } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import { SlidersHorizontal } from "lucide-react";
import { useState } from "react";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { Dialog, DialogTrigger, SheetContent } from "../../components/ui/dialog.tsx";
import { Field, Select } from "../../components/ui/input.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import type { ActivityFilters } from "../../lib/api.ts";
import { billingApi } from "../../lib/billing-api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { useMediaQuery } from "../../lib/use-media-query.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { billingColumns, DataTable } from "./data-table.tsx";
import { DateRangeFields } from "./date-range.tsx";
import { PREVIEW } from "./usage-data.ts";
import { count, dayRange, when } from "./words.ts";

const column = billingColumns<ActivityItem>();
const columns = [
  column.accessor("createdAt", {
    header: "Time",
    cell: (info) => <span className="whitespace-nowrap">{when(info.getValue())}</span>,
  }),
  column.accessor((row) => row.member?.label ?? "—", { id: "member", header: "Who" }),
  column.accessor((row) => row.session?.label ?? PREVIEW, {
    id: "session",
    header: "Session",
    cell: (info) => (
      <span className="grid min-w-40">
        <span className="break-words">{info.getValue()}</span>
        {info.row.original.project ? (
          <span className="text-muted-foreground text-xs">{info.row.original.project.label}</span>
        ) : null}
      </span>
    ),
  }),
  // The catalogue's display name (the id when it does not list the model), the id on hover; a
  // tool call is marked as one and named by its source and tool ("Acme Shop orders · order_status").
  column.accessor("modelLabel", {
    header: "Model or tool",
    cell: (info) =>
      info.row.original.kind === "tool" ? (
        <span className="inline-flex flex-wrap items-center gap-1.5">
          <Badge tone="info">Tool call</Badge>
          <span className="[overflow-wrap:anywhere]">{info.getValue()}</span>
        </span>
      ) : (
        <span className="whitespace-nowrap" title={info.row.original.model}>
          {info.getValue()}
        </span>
      ),
  }),
  column.accessor((row) => row.promptTokens + row.completionTokens, {
    id: "tokens",
    header: "Tokens",
    cell: (info) =>
      info.row.original.kind === "tool" ? (
        <span className="text-muted-foreground">—</span>
      ) : (
        <span
          title={`${count(info.row.original.promptTokens)} in, ${count(info.row.original.completionTokens)} out`}
        >
          {count(info.getValue())}
        </span>
      ),
    meta: { align: "right" },
  }),
  column.accessor("priceMicros", {
    header: "Cost",
    cell: (info) =>
      info.row.original.billable ? (
        formatMicros(info.getValue(), { precise: true })
      ) : (
        <span className="text-muted-foreground">Free</span>
      ),
    meta: { align: "right" },
  }),
];

/** Options of a filter: who (or what) spent in the window, with names, from the usage report. */
function useOptions(orgId: string, groupBy: UsageGroupBy, enabled: boolean) {
  // All time: the activity list has no default window, so neither have its filters.
  const range = { from: "2000-01-01" };
  const query = useQuery({
    queryKey: keys.billingUsage(orgId, groupBy, range),
    queryFn: () => billingApi.usage(orgId, groupBy, range),
    enabled,
  });
  return (query.data?.items ?? [])
    .filter((item) => item.key !== null)
    .map((item) => ({ value: item.key ?? "", label: item.label || (item.key ?? "") }));
}

/**
 * Every provider call, newest first, like OpenRouter's activity page: time, who, session, model,
 * tokens and cost, filtered by member (owners and admins; a member sees only their own), project,
 * model and days, a page at a time.
 */
export function ActivityTable({ orgId, canManage }: { orgId: string; canManage: boolean }) {
  const [member, setMember] = useState("");
  const [project, setProject] = useState("");
  const [model, setModel] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const filters: ActivityFilters = {
    ...(member ? { member } : {}),
    ...(project ? { project } : {}),
    ...(model ? { model } : {}),
    ...dayRange(from, to),
  };
  const members = useOptions(orgId, "member", canManage);
  const projects = useOptions(orgId, "project", true);
  const models = useOptions(orgId, "model", true);
  const { query, items, more, firstPageError } = usePaged(
    keys.billingActivity(orgId, { ...filters }),
    (cursor) => billingApi.activity(orgId, filters, cursor),
  );
  const filtered = Object.keys(filters).length > 0;
  const active = [member, project, model, from || to].filter(Boolean).length;
  // On a phone the five filters would push the calls a screen down: they open in a sheet.
  const phone = useMediaQuery("(max-width: 639px)");
  const [sheetOpen, setSheetOpen] = useState(false);

  const filterFields = (
    <fieldset className="relative grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-5">
      <legend className="sr-only">Filter activity</legend>
      {canManage ? (
        <Field label="Member">
          <Select value={member} onChange={(event) => setMember(event.target.value)}>
            <option value="">All members</option>
            {members.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </Select>
        </Field>
      ) : null}
      <Field label="Project">
        <Select value={project} onChange={(event) => setProject(event.target.value)}>
          <option value="">All projects</option>
          {projects.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </Select>
      </Field>
      <Field label="Model">
        <Select value={model} onChange={(event) => setModel(event.target.value)}>
          <option value="">All models</option>
          {models.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </Select>
      </Field>
      <DateRangeFields from={from} to={to} onFrom={setFrom} onTo={setTo} />
    </fieldset>
  );

  return (
    <Card aria-labelledby="activity-title">
      <CardHeader
        id="activity-title"
        title="Activity"
        description={
          canManage
            ? "Every model and tool call of the organization, newest first."
            : "Every model and tool call you made, newest first."
        }
      />
      <CardBody className="grid gap-4">
        {phone ? (
          <Dialog open={sheetOpen} onOpenChange={setSheetOpen}>
            <DialogTrigger asChild>
              <Button variant="secondary" size="sm" className="justify-self-start">
                <SlidersHorizontal aria-hidden="true" />
                {active > 0 ? `Filters (${active})` : "Filters"}
              </Button>
            </DialogTrigger>
            <SheetContent title="Filter activity">
              {filterFields}
              <Button variant="primary" onClick={() => setSheetOpen(false)}>
                Show calls
              </Button>
            </SheetContent>
          </Dialog>
        ) : (
          filterFields
        )}
        {filtered ? (
          <div>
            <Button
              size="sm"
              variant="ghost"
              onClick={() => {
                setMember("");
                setProject("");
                setModel("");
                setFrom("");
                setTo("");
              }}
            >
              Clear filters
            </Button>
          </div>
        ) : null}
        {query.isPending ? (
          <Loading label="Loading activity…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState title={filtered ? "No calls match these filters" : "No activity yet"}>
            {filtered ? null : "Each reply of the assistant shows here with what it cost."}
          </EmptyState>
        ) : (
          <>
            <DataTable
              columns={columns}
              data={items}
              caption="Model and tool calls, newest first"
              rowKey={(item) => item.id}
            />
            <LoadMore more={more} label="More activity" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
