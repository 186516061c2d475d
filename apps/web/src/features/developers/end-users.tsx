import { END_USER_USAGE_DAYS, type EndUserWithUsage } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { Users } from "lucide-react";
import { useId, useState } from "react";
import { toast } from "sonner";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { FigureCards, useWideTable } from "../../components/ui/figure-cards.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { num, Table, TBody, Td, THead, Th, Tr } from "../../components/ui/table.tsx";
import { formatMicros } from "../../lib/money.ts";
import { refusalText } from "../../lib/refusal.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { developersApi, devKeys } from "./developers-api.ts";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

// Parley's own preview end users: `parley:preview:` since 2026-12-06, `parley-preview:` before.
const PREVIEW = ["parley:preview:", "parley-preview:"];

/** Who an end user is, in the words the org knows them by. */
const who = (endUser: EndUserWithUsage) => endUser.name ?? endUser.externalId;

/** An end user's name, a preview badge for the app page's own preview, and their external id. */
function endUserTitle(endUser: EndUserWithUsage) {
  return (
    <span className="grid min-w-0">
      <span className="font-medium">
        {who(endUser)}{" "}
        {PREVIEW.some((p) => endUser.externalId.startsWith(p)) ? (
          <Badge tone="info">preview</Badge>
        ) : null}
      </span>
      <span className="break-all text-muted-foreground text-xs">{endUser.externalId}</span>
    </span>
  );
}

/**
 * The app's end users with their last 30 days of usage, newest first. An owner or admin erases
 * one (their chats, their row, their name in the ledger), as the tenant's server can with its key.
 */
export function EndUsers({ appId }: { appId: string }) {
  const id = useId();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [erasing, setErasing] = useState<ReadonlySet<string>>(new Set());
  const { query, items, more, firstPageError } = usePaged(devKeys.endUsers(appId), (cursor) =>
    developersApi.endUsers(appId, cursor),
  );
  const erase = async (endUser: EndUserWithUsage) => {
    const sure = await confirm({
      title: `Erase ${who(endUser)}?`,
      description:
        "Their chats and transcripts, their record and their name in your usage are erased for good (the amounts stay, under a pseudonym). Their open chats close now.",
      confirmLabel: "Erase end user",
      destructive: true,
    });
    if (!sure) return;
    try {
      await developersApi.eraseEndUser(appId, endUser.id);
      setErasing((before) => new Set(before).add(endUser.id));
      toast.success(`Erasure of ${who(endUser)} filed`);
      void queryClient.invalidateQueries({ queryKey: devKeys.endUsers(appId) });
    } catch (caught) {
      toast.error(refusalText(caught));
    }
  };
  const eraseAction = (endUser: EndUserWithUsage) =>
    erasing.has(endUser.id) ? (
      <Badge tone="warning">Erasing</Badge>
    ) : (
      <Button
        size="sm"
        variant="ghost"
        aria-label={`Erase ${who(endUser)}`}
        onClick={() => void erase(endUser)}
      >
        Erase
      </Button>
    );
  // Narrower, each end user is a card: the cost column was off the side of a phone.
  const wide = useWideTable();
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="End users"
        description={`Your users who chatted through this app, with their model calls and what they cost the org over the last ${END_USER_USAGE_DAYS} days.`}
      />
      <CardBody className="pt-3">
        {query.isPending ? (
          <Loading label="Loading end users…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState icon={<Users />} title="No end users yet">
            They appear here the first time your server gets a token for one.
          </EmptyState>
        ) : (
          <>
            {wide ? (
              <Table>
                <caption className="sr-only">End users of this app</caption>
                <THead>
                  <Tr>
                    <Th>End user</Th>
                    <Th>Last seen</Th>
                    <Th className={num}>Calls</Th>
                    <Th className={num}>Cost</Th>
                    <Th>
                      <span className="sr-only">Actions</span>
                    </Th>
                  </Tr>
                </THead>
                <TBody>
                  {items.map((endUser) => (
                    <Tr key={endUser.id}>
                      <Td>{endUserTitle(endUser)}</Td>
                      <Td className="whitespace-nowrap">
                        {when.format(new Date(endUser.lastSeenAt))}
                      </Td>
                      <Td className={num}>{endUser.usage.requests}</Td>
                      <Td className={num}>
                        {formatMicros(endUser.usage.priceMicros, { precise: true })}
                      </Td>
                      <Td className="text-right">{eraseAction(endUser)}</Td>
                    </Tr>
                  ))}
                </TBody>
              </Table>
            ) : (
              <FigureCards
                label="End users of this app"
                cards={items.map((endUser) => ({
                  key: endUser.id,
                  title: endUserTitle(endUser),
                  figures: [
                    {
                      label: "Cost",
                      value: formatMicros(endUser.usage.priceMicros, { precise: true }),
                    },
                    { label: "Calls", value: endUser.usage.requests },
                    { label: "Last seen", value: when.format(new Date(endUser.lastSeenAt)) },
                  ],
                  action: eraseAction(endUser),
                }))}
              />
            )}
            <LoadMore more={more} label="More end users" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
