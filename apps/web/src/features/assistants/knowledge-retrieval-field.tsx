import { useId } from "react";
import { cn } from "../../lib/cn.ts";

/**
 * The profile's `knowledgeRetrieval` switch (issue 31): before the first model call of each turn,
 * the project's documents are searched with the person's message and the passages found go into
 * the prompt, so the assistant answers from them without having to call `search_knowledge`
 * first. Unlike the tools, it also runs for end users and on models that call no tools.
 */
export function KnowledgeRetrievalField({
  on,
  onChange,
  readOnly,
}: {
  on: boolean;
  onChange: (on: boolean) => void;
  readOnly?: boolean;
}) {
  const id = useId();
  return (
    <label
      className={cn(
        "flex items-start gap-3 rounded-md border p-3 text-sm",
        on ? "border-primary/50 bg-accent/40" : "border-border",
        readOnly ? "" : "cursor-pointer hover:bg-accent/60",
      )}
    >
      <input
        type="checkbox"
        className="mt-0.5 size-4 shrink-0 accent-primary"
        checked={on}
        disabled={readOnly}
        aria-describedby={`${id}-hint`}
        onChange={(event) => onChange(event.target.checked)}
      />
      <span className="grid gap-0.5">
        <span className="font-medium">Search the documents before answering</span>
        <span id={`${id}-hint`} className="text-muted-foreground text-xs">
          Each message is looked up in the project's documents first and the assistant is given the
          passages that match, cited under its reply. Members and end users alike, with any model.
        </span>
      </span>
    </label>
  );
}
