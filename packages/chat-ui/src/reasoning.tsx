import { ChevronRight } from "lucide-react";
import { useId, useState } from "react";
import { cn } from "./cn.ts";

/**
 * A reply's reasoning, set apart from the answer in a box of its own. Open while the model is
 * only thinking (it is all there is to read), collapsed by default once the answer has started;
 * the person's own toggle wins over either.
 */
export function Reasoning({
  text,
  answerStarted,
  streaming = false,
}: {
  text: string;
  answerStarted: boolean;
  streaming?: boolean;
}) {
  const [chosen, setChosen] = useState<boolean | null>(null);
  const open = chosen ?? !answerStarted;
  const id = useId();
  return (
    <div className="rounded-lg border border-border bg-muted text-muted-foreground text-sm">
      <button
        type="button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setChosen(!open)}
        className="flex w-full items-center gap-1.5 rounded-lg px-3 py-2 text-left font-medium outline-none hover:text-foreground focus-visible:ring-2 focus-visible:ring-ring"
      >
        <ChevronRight
          aria-hidden="true"
          className={cn("size-4 shrink-0 transition-transform", open && "rotate-90")}
        />
        Reasoning
        {streaming && !answerStarted ? (
          <span className="font-normal text-xs" aria-hidden="true">
            …
          </span>
        ) : null}
      </button>
      <div
        id={id}
        hidden={!open}
        className="whitespace-pre-wrap break-words border-border border-t px-3 py-2 italic"
      >
        {text}
      </div>
    </div>
  );
}
