import { parseSourceToolRef, type ToolSource } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useId } from "react";
import { cn } from "../../lib/cn.ts";
import { toolSourcesKey, toolsApi } from "../../lib/tools-api.ts";
import { AccessBadge } from "./source-card.tsx";

/**
 * The org's tool source tools a profile may switch on (`source:<id>:<tool>` in its `tools`), one
 * switch each, grouped by source, with its read/write mark: these run for members and end users
 * alike, as that person, and a write asks them first. A name the profile holds that no source
 * lists any more is shown too, so saving never drops it unseen.
 */
export function SourceToolsField({
  orgId,
  tools,
  onChange,
  readOnly,
}: {
  orgId: string;
  tools: string[];
  onChange: (tools: string[]) => void;
  readOnly?: boolean;
}) {
  const id = useId();
  // The first page (50 sources) is what an editor offers; an org with more is rare.
  const sources = useQuery({
    queryKey: [...toolSourcesKey(orgId), "first"],
    queryFn: () => toolsApi.sources(orgId),
  });
  const listed = sources.data?.items ?? [];
  const known = new Set(listed.flatMap((source) => source.tools.map((tool) => tool.ref)));
  const missing = tools.filter((name) => parseSourceToolRef(name) !== null && !known.has(name));
  const toggle = (ref: string, on: boolean) =>
    onChange(on ? [...tools, ref] : tools.filter((name) => name !== ref));
  return (
    <fieldset className="grid gap-3" aria-describedby={`${id}-hint`}>
      <legend className="font-medium text-sm">Tools from your product</legend>
      <p id={`${id}-hint`} className="text-muted-foreground text-sm">
        They act in your product as the person who chats, members and end users alike. A write runs
        only after that person approves the exact call. Add sources in{" "}
        <Link to="/assistants" hash="tools" className="text-primary underline underline-offset-4">
          Assistants, Tools
        </Link>
        .
      </p>
      {sources.isPending ? (
        <p className="text-muted-foreground text-sm">Loading tool sources…</p>
      ) : listed.length === 0 && missing.length === 0 ? (
        <p className="text-muted-foreground text-sm">No tool sources yet.</p>
      ) : null}
      {listed.map((source) => (
        <SourceGroup
          key={source.id}
          source={source}
          tools={tools}
          toggle={toggle}
          readOnly={readOnly}
        />
      ))}
      {missing.length > 0 ? (
        <div className="grid gap-2">
          <p className="text-sm text-warning">
            Switched on but no longer listed by their source (they are not offered):
          </p>
          <ul className="grid gap-1">
            {missing.map((ref) => (
              <li key={ref}>
                <label className="flex items-center gap-2 text-sm">
                  <input
                    type="checkbox"
                    className="size-4 accent-primary"
                    checked
                    disabled={readOnly}
                    onChange={() => toggle(ref, false)}
                  />
                  <code className="font-mono text-xs">{parseSourceToolRef(ref)?.toolName}</code>
                </label>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </fieldset>
  );
}

function SourceGroup({
  source,
  tools,
  toggle,
  readOnly,
}: {
  source: ToolSource;
  tools: string[];
  toggle: (ref: string, on: boolean) => void;
  readOnly?: boolean;
}) {
  return (
    <div className="grid gap-2">
      <p className="font-medium text-sm">{source.name}</p>
      {source.tools.length === 0 ? (
        <p className="text-muted-foreground text-xs">This source lists no tools.</p>
      ) : (
        <ul className="grid gap-2 sm:grid-cols-2">
          {source.tools.map((tool) => {
            const on = tools.includes(tool.ref);
            const disabled = readOnly || (!tool.usable && !on);
            return (
              <li key={tool.ref}>
                <label
                  className={cn(
                    "flex h-full items-start gap-3 rounded-md border p-3 text-sm",
                    on ? "border-primary/50 bg-accent/40" : "border-border",
                    disabled ? "" : "cursor-pointer hover:bg-accent/60",
                  )}
                >
                  <input
                    type="checkbox"
                    className="mt-0.5 size-4 shrink-0 accent-primary"
                    checked={on}
                    disabled={disabled}
                    onChange={(event) => toggle(tool.ref, event.target.checked)}
                  />
                  <span className="grid min-w-0 gap-1">
                    <span className="flex flex-wrap items-center gap-2">
                      <code className="break-all font-medium font-mono">{tool.name}</code>
                      <AccessBadge access={tool.access} />
                    </span>
                    <span className="text-muted-foreground text-xs">
                      {tool.usable
                        ? tool.description
                        : "Its name or schema cannot be offered to a model."}
                    </span>
                  </span>
                </label>
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}
