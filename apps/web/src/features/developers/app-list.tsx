import { Link } from "@tanstack/react-router";
import { AppWindow } from "lucide-react";
import { useId } from "react";
import { LoadMore } from "../../components/load-more.tsx";
import { Badge } from "../../components/ui/badge.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { usePaged } from "../../lib/use-paged.ts";
import { developersApi, devKeys } from "./developers-api.ts";
import { NewAppDialog } from "./new-app-dialog.tsx";

const VERIFIED_BY = { secret: "Parley secret", public_key: "Public key", jwks: "JWKS" } as const;

/** The org's apps: each opens its page (settings, secrets, snippet, preview, end users). */
export function AppList({ orgId }: { orgId: string }) {
  const id = useId();
  const { query, items, more, firstPageError } = usePaged(devKeys.apps(orgId), (cursor) =>
    developersApi.apps(orgId, cursor),
  );
  return (
    <Card aria-labelledby={`${id}-title`}>
      <CardHeader
        id={`${id}-title`}
        title="Apps"
        description="Your products where your own users chat with the assistant."
        actions={<NewAppDialog orgId={orgId} />}
      />
      <CardBody className="pt-3">
        {query.isPending ? (
          <Loading label="Loading apps…" />
        ) : firstPageError ? (
          <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
        ) : items.length === 0 ? (
          <EmptyState icon={<AppWindow />} title="No apps yet">
            Create one to put the assistant on your own site, for your own users.
          </EmptyState>
        ) : (
          <>
            <ul className="grid divide-y divide-border">
              {items.map((app) => (
                <li key={app.id}>
                  <Link
                    to="/developers/apps/$appId"
                    params={{ appId: app.id }}
                    className="flex flex-wrap items-center justify-between gap-x-4 gap-y-2 rounded-md px-2 py-3 hover:bg-accent"
                  >
                    <span className="grid min-w-0 gap-0.5">
                      <span className="truncate font-medium">{app.name}</span>
                      <span className="break-all text-muted-foreground text-xs">
                        {app.allowedOrigins.length === 0
                          ? "No origin allowed yet"
                          : app.allowedOrigins.join(", ")}
                      </span>
                    </span>
                    <span className="flex flex-wrap gap-1">
                      <Badge tone="info">{VERIFIED_BY[app.verification.type]}</Badge>
                      {app.showCost ? <Badge>Shows cost</Badge> : null}
                    </span>
                  </Link>
                </li>
              ))}
            </ul>
            <LoadMore more={more} label="More apps" />
          </>
        )}
      </CardBody>
    </Card>
  );
}
