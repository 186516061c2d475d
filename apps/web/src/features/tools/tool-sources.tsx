import { Plug } from "lucide-react";
import { useId } from "react";
import { LoadMore } from "../../components/load-more.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { EmptyState, ErrorNote, Loading } from "../../components/ui/states.tsx";
import { toolSourcesKey, toolsApi } from "../../lib/tools-api.ts";
import { usePaged } from "../../lib/use-paged.ts";
import { RegisterSourceDialog } from "./register-source.tsx";
import { SourceCard } from "./source-card.tsx";

/**
 * The org's tool sources (issue 30; the Assistants page's Tools tab, `/assistants#tools`, in that
 * page's lazy chunk: nothing of it is in the app shell): MCP servers and HTTP actions of the org's own product, their tools marked
 * read or write, their health. Owners and admins add, refresh, import and delete; members read.
 * A profile switches individual tools on (the profile editor's Tools card).
 */
export default function ToolSources({ orgId, canManage }: { orgId: string; canManage: boolean }) {
  const id = useId();
  const { query, items, more, firstPageError } = usePaged(toolSourcesKey(orgId), (cursor) =>
    toolsApi.sources(orgId, cursor),
  );
  return (
    <div className="grid gap-4">
      <Card aria-labelledby={`${id}-title`}>
        <CardHeader
          id={`${id}-title`}
          title="Tool sources"
          description="Let the assistant act in your product: look up an order, request a refund. Every call carries a token Parley signs naming the person who chats; a write runs only after they approve that exact call."
          actions={canManage ? <RegisterSourceDialog orgId={orgId} /> : null}
        />
        <CardBody className="pt-3">
          {query.isPending ? (
            <Loading label="Loading tool sources…" />
          ) : firstPageError ? (
            <ErrorNote error={firstPageError} retry={() => void query.refetch()} />
          ) : items.length === 0 ? (
            <EmptyState icon={<Plug />} title="No tool sources yet">
              {canManage
                ? "Add your MCP server or an HTTP action, then switch its tools on in an assistant profile."
                : "Owners and admins add them."}
            </EmptyState>
          ) : (
            <p className="text-muted-foreground text-sm">
              {items.length} source{items.length === 1 ? "" : "s"}. Switch their tools on in a
              profile.
            </p>
          )}
        </CardBody>
      </Card>
      {items.map((source) => (
        <SourceCard key={source.id} source={source} canManage={canManage} />
      ))}
      <LoadMore more={more} label="More tool sources" />
    </div>
  );
}
