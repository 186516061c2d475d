import type { CatalogueModel } from "@parley/shared";
import { cn } from "../../lib/cn.ts";
import { diffCounts, foldUnchanged, lineDiff } from "./line-diff.ts";
import { modelName } from "./model-words.ts";
import type { ProfileContent } from "./profile-draft.ts";

/** A text's lines compared, as a code review shows them: numbers, − and +, folded context. */
function TextDiff({ label, before, after }: { label: string; before: string; after: string }) {
  const lines = lineDiff(before, after);
  const { added, removed } = diffCounts(lines);
  if (added === 0 && removed === 0) return null;
  return (
    <section
      className="grid gap-1.5"
      aria-label={`${label}: ${removed} lines removed, ${added} added`}
    >
      <h3 className="flex flex-wrap items-baseline gap-2 font-medium text-sm">
        {label}
        <span className="font-normal text-xs tabular-nums">
          <span className="text-destructive">−{removed}</span>{" "}
          <span className="text-success">+{added}</span>
        </span>
      </h3>
      <div
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be keyboard-reachable.
        tabIndex={0}
        className="max-h-80 overflow-auto rounded-md border border-border font-mono text-[12px] leading-relaxed focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-ring"
      >
        <table className="w-full border-collapse">
          <tbody>
            {foldUnchanged(lines).map((row, index) =>
              row.kind === "gap" ? (
                // biome-ignore lint/suspicious/noArrayIndexKey: rows of one computed diff, never reordered.
                <tr key={index} className="bg-muted/60 text-muted-foreground">
                  <td colSpan={3} className="px-3 py-1 text-center text-xs">
                    {row.count} unchanged {row.count === 1 ? "line" : "lines"}
                  </td>
                </tr>
              ) : (
                <tr
                  // biome-ignore lint/suspicious/noArrayIndexKey: rows of one computed diff, never reordered.
                  key={index}
                  className={cn(
                    row.kind === "added" && "bg-success/10",
                    row.kind === "removed" && "bg-destructive/10",
                  )}
                >
                  <td className="w-7 select-none px-1 text-right align-top text-muted-foreground tabular-nums sm:w-10 sm:px-2">
                    {row.oldNumber ?? ""}
                  </td>
                  <td className="w-7 select-none px-1 text-right align-top text-muted-foreground tabular-nums sm:w-10 sm:px-2">
                    {row.newNumber ?? ""}
                  </td>
                  <td className="whitespace-pre-wrap break-words px-2 align-top">
                    <span
                      aria-hidden="true"
                      className={cn(
                        "mr-2 select-none",
                        row.kind === "added" && "text-success",
                        row.kind === "removed" && "text-destructive",
                      )}
                    >
                      {row.kind === "added" ? "+" : row.kind === "removed" ? "−" : " "}
                    </span>
                    <span className="sr-only">
                      {row.kind === "added" ? "Added: " : row.kind === "removed" ? "Removed: " : ""}
                    </span>
                    {row.text === "" ? "\u00a0" : row.text}
                  </td>
                </tr>
              ),
            )}
          </tbody>
        </table>
      </div>
    </section>
  );
}

const numberWords = (value: number | null) => (value === null ? "Default" : String(value));

/**
 * What differs between a version and the current one: the instructions, the welcome and the
 * suggestions line by line, and every other setting as before → after. `before` is the older
 * version, `after` the current one.
 */
export function VersionDiff({
  before,
  after,
  beforeLabel,
  afterLabel,
  names,
}: {
  before: ProfileContent;
  after: ProfileContent;
  beforeLabel: string;
  afterLabel: string;
  names: readonly CatalogueModel[];
}) {
  const settings = [
    { label: "Name", from: before.name, to: after.name },
    { label: "Model", from: modelName(names, before.model), to: modelName(names, after.model) },
    {
      label: "Temperature",
      from: numberWords(before.temperature),
      to: numberWords(after.temperature),
    },
    { label: "Top-p", from: numberWords(before.topP), to: numberWords(after.topP) },
    {
      label: "Max output tokens",
      from: numberWords(before.maxOutputTokens),
      to: numberWords(after.maxOutputTokens),
    },
    {
      label: "Tools",
      from: before.tools.join(", ") || "None",
      to: after.tools.join(", ") || "None",
    },
    {
      label: "Search the documents before answering",
      from: before.knowledgeRetrieval ? "On" : "Off",
      to: after.knowledgeRetrieval ? "On" : "Off",
    },
  ].filter((row) => row.from !== row.to);
  const texts = [
    { label: "Instructions", before: before.instructions, after: after.instructions },
    { label: "Welcome message", before: before.welcome ?? "", after: after.welcome ?? "" },
    {
      label: "Suggested prompts",
      before: before.suggestions.join("\n"),
      after: after.suggestions.join("\n"),
    },
  ].filter((text) => text.before !== text.after);
  if (settings.length === 0 && texts.length === 0) {
    return (
      <p className="text-muted-foreground text-sm">
        {beforeLabel} and {afterLabel} say the same.
      </p>
    );
  }
  return (
    <div className="grid gap-5">
      {texts.map((text) => (
        <TextDiff key={text.label} {...text} />
      ))}
      {settings.length > 0 ? (
        <section className="grid gap-1.5" aria-label="Settings that differ">
          <h3 className="font-medium text-sm">Settings</h3>
          <table className="w-full border-collapse text-sm">
            <thead className="text-muted-foreground text-xs">
              <tr className="border-border border-b">
                <th scope="col" className="py-1.5 pr-3 text-left font-medium">
                  Setting
                </th>
                <th scope="col" className="py-1.5 pr-3 text-left font-medium">
                  {beforeLabel}
                </th>
                <th scope="col" className="py-1.5 text-left font-medium">
                  {afterLabel}
                </th>
              </tr>
            </thead>
            <tbody>
              {settings.map((row) => (
                <tr key={row.label} className="border-border border-b last:border-0">
                  <th scope="row" className="py-1.5 pr-3 text-left font-medium">
                    {row.label}
                  </th>
                  <td className="break-words py-1.5 pr-3 text-destructive line-through decoration-destructive/40">
                    {row.from}
                  </td>
                  <td className="break-words py-1.5 text-success">{row.to}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </div>
  );
}
