import type { OpenApiImportResult, ToolSource } from "@parley/shared";
import { useQueryClient } from "@tanstack/react-query";
import { FileUp, RefreshCw, Trash2 } from "lucide-react";
import { useId, useState } from "react";
import { toast } from "sonner";
import { Badge } from "../../components/ui/badge.tsx";
import { Button } from "../../components/ui/button.tsx";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { useConfirm } from "../../components/ui/confirm.tsx";
import { Dialog, DialogContent, DialogTrigger } from "../../components/ui/dialog.tsx";
import { Field, Textarea } from "../../components/ui/input.tsx";
import { ErrorNote } from "../../components/ui/states.tsx";
import { toolSourcesKey, toolsApi } from "../../lib/tools-api.ts";
import { SourceEditorDialog } from "./source-editor.tsx";
import { errorClassWords, healthWords, parseJsonObject, priceWords } from "./source-words.ts";

const when = new Intl.DateTimeFormat("en-US", { dateStyle: "medium", timeStyle: "short" });

/** A tool's read or write mark: a write asks the person in the chat before each call. */
export function AccessBadge({ access }: { access: "read" | "write" }) {
  return access === "read" ? (
    <Badge tone="info">Read</Badge>
  ) : (
    <Badge tone="warning">Write · asks first</Badge>
  );
}

/**
 * One tool source: where it is, its health (a source failing calls in a row is shown so), its
 * price, and its tools with their read/write marks. Owners and admins refresh an MCP server's
 * tools, import an OpenAPI document into an HTTP source, and delete it (asked first; a source a
 * profile still uses is refused, naming the profiles).
 */
export function SourceCard({ source, canManage }: { source: ToolSource; canManage: boolean }) {
  const id = useId();
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState<"refresh" | "delete" | null>(null);
  const health = healthWords(source.health);
  const refreshList = () =>
    queryClient.invalidateQueries({ queryKey: toolSourcesKey(source.orgId) });

  const refresh = async () => {
    setBusy("refresh");
    setError(null);
    try {
      const fresh = await toolsApi.refresh(source.id);
      toast.success(`${fresh.name}: ${fresh.tools.length} tools listed`);
      await refreshList();
    } catch (caught) {
      setError(caught);
      await refreshList();
    } finally {
      setBusy(null);
    }
  };

  const remove = async () => {
    const sure = await confirm({
      title: `Delete ${source.name}?`,
      description:
        "The assistant can no longer call its tools. Profiles that switch them on must turn them off first.",
      confirmLabel: "Delete source",
      destructive: true,
    });
    if (!sure) return;
    setBusy("delete");
    setError(null);
    try {
      await toolsApi.remove(source.id);
      toast.success(`${source.name} deleted`);
      await refreshList();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(null);
    }
  };

  return (
    <Card aria-labelledby={`${id}-name`}>
      <CardHeader
        id={`${id}-name`}
        level={3}
        title={source.name}
        description={
          <span className="grid gap-1">
            <span className="break-all font-mono text-xs">{source.url}</span>
            {source.description ? <span>{source.description}</span> : null}
            {/* What the tenant's server must pin (docs/2026-12-06-tools.md, "Verifying the org"):
                any org can register this URL, only `org` says whose user `sub` is. */}
            <span className="text-xs">
              Verify on your server: <code>aud</code> {source.url}, <code>org</code>{" "}
              <span className="font-mono">{source.orgId}</span>, <code>kind</code> end_user for a
              user's own data
            </span>
          </span>
        }
        actions={
          canManage ? (
            <div className="flex flex-wrap gap-2">
              <SourceEditorDialog source={source} />
              {source.kind === "mcp" ? (
                <Button size="sm" onClick={() => void refresh()} disabled={busy !== null}>
                  <RefreshCw aria-hidden="true" />
                  {busy === "refresh" ? "Refreshing…" : "Refresh tools"}
                </Button>
              ) : (
                <ImportOpenApiDialog source={source} onDone={() => void refreshList()} />
              )}
              <Button
                size="sm"
                variant="ghost"
                onClick={() => void remove()}
                disabled={busy !== null}
                aria-label={`Delete ${source.name}`}
              >
                <Trash2 aria-hidden="true" />
                Delete
              </Button>
            </div>
          ) : null
        }
      />
      <CardBody className="grid gap-4 pt-0">
        <div className="flex flex-wrap items-center gap-2 text-sm">
          <Badge>{source.kind === "mcp" ? "MCP server" : "HTTP actions"}</Badge>
          {source.enabled ? null : <Badge tone="warning">Off</Badge>}
          <Badge tone={health.tone}>{health.label}</Badge>
          <Badge>{priceWords(source.priceMicros)}</Badge>
          <Badge>
            {source.credential ? `Credential set (${source.credential.header})` : "No credential"}
          </Badge>
        </div>
        {source.health.status === "unhealthy" && source.health.lastErrorCode ? (
          // The class only: the error's text may quote the tenant's server.
          <p className="text-destructive text-sm">
            Last error
            {source.health.lastErrorAt
              ? ` (${when.format(new Date(source.health.lastErrorAt))})`
              : ""}
            : {errorClassWords(source.health.lastErrorCode)}
          </p>
        ) : null}
        <ErrorNote error={error} />
        {source.tools.length === 0 ? (
          <p className="text-muted-foreground text-sm">
            {source.kind === "mcp"
              ? "The server lists no tools yet."
              : "No actions yet: import an OpenAPI document or add them through the API."}
          </p>
        ) : (
          <ul className="grid divide-y divide-border rounded-md border border-border">
            {source.tools.map((tool) => (
              <li key={tool.name} className="grid gap-1 px-3 py-2 text-sm">
                <span className="flex flex-wrap items-center gap-2">
                  <code className="font-medium font-mono">{tool.name}</code>
                  <AccessBadge access={tool.access} />
                  {tool.method ? (
                    <span className="font-mono text-muted-foreground text-xs">
                      {tool.method} {tool.path}
                    </span>
                  ) : null}
                  {tool.usable ? null : <Badge tone="danger">Cannot be offered</Badge>}
                </span>
                {tool.description ? (
                  <span className="text-muted-foreground text-xs">{tool.description}</span>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </CardBody>
    </Card>
  );
}

/** Replaces an HTTP source's actions with an OpenAPI 3.x document's operations (pasted JSON). */
function ImportOpenApiDialog({ source, onDone }: { source: ToolSource; onDone: () => void }) {
  const [open, setOpen] = useState(false);
  const [text, setText] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState<OpenApiImportResult | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <Dialog
      open={open}
      onOpenChange={(next) => {
        setOpen(next);
        setError(null);
        setResult(null);
      }}
    >
      <DialogTrigger asChild>
        <Button size="sm">
          <FileUp aria-hidden="true" />
          Import OpenAPI
        </Button>
      </DialogTrigger>
      <DialogContent
        title={`Import OpenAPI into ${source.name}`}
        description="Each operation becomes an action: GET reads, others write unless marked x-parley-access. The source's actions are replaced."
      >
        <form
          className="grid gap-4"
          onSubmit={async (event) => {
            event.preventDefault();
            const parsed = parseJsonObject(text);
            if (!parsed.ok) {
              setError(new Error(`The document ${parsed.message}`));
              return;
            }
            setBusy(true);
            setError(null);
            try {
              const imported = await toolsApi.importOpenApi(source.id, parsed.value);
              setResult(imported);
              onDone();
            } catch (caught) {
              setError(caught);
            } finally {
              setBusy(false);
            }
          }}
        >
          <Field label="OpenAPI document (JSON)">
            <Textarea
              className="font-mono text-xs"
              rows={10}
              required
              value={text}
              onChange={(event) => setText(event.target.value)}
            />
          </Field>
          <ErrorNote error={error} />
          {result ? (
            <div role="status" className="grid gap-1 text-sm">
              <p>
                Imported {result.imported} action{result.imported === 1 ? "" : "s"}.
              </p>
              {result.skipped.map((skip) => (
                <p key={`${skip.method} ${skip.path}`} className="text-muted-foreground">
                  Skipped {skip.method} {skip.path}: {skip.reason}
                </p>
              ))}
            </div>
          ) : null}
          <div className="flex justify-end gap-2">
            <Button onClick={() => setOpen(false)}>{result ? "Close" : "Cancel"}</Button>
            {result ? null : (
              <Button type="submit" variant="primary" disabled={busy}>
                {busy ? "Importing…" : "Import"}
              </Button>
            )}
          </div>
        </form>
      </DialogContent>
    </Dialog>
  );
}
