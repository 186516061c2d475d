import { MessageSquare } from "lucide-react";
import { cn } from "./cn.ts";

/**
 * A profile's suggested prompts under an empty chat's welcome (issue 29), the web app's and the
 * embed's alike: each a button that sends it as the person's message. The text is the tenant's,
 * shown as typed (never markup) and wrapped anywhere (a long word must not widen the panel).
 * `wide`: two columns from the `sm` breakpoint when there is more than one (the web app's page);
 * otherwise one column (the embed's narrow panel).
 */
export function SuggestedPrompts({
  suggestions,
  send,
  wide = false,
}: {
  suggestions: readonly string[];
  send: (text: string) => void;
  wide?: boolean;
}) {
  if (suggestions.length === 0) return null;
  return (
    <ul
      aria-label="Suggested prompts"
      className={cn(
        "grid w-full gap-2",
        wide && (suggestions.length > 1 ? "max-w-xl sm:grid-cols-2" : "max-w-xs"),
      )}
    >
      {suggestions.map((text) => (
        <li key={text}>
          <button
            type="button"
            onClick={() => send(text)}
            className="flex h-full w-full items-start gap-2 rounded-lg border border-border bg-card px-3 py-2.5 text-left text-foreground text-sm shadow-xs outline-none transition-colors [overflow-wrap:anywhere] hover:bg-accent focus-visible:ring-2 focus-visible:ring-ring"
          >
            <MessageSquare
              aria-hidden="true"
              className="mt-0.5 size-4 shrink-0 text-muted-foreground"
            />
            <span className="min-w-0">{text}</span>
          </button>
        </li>
      ))}
    </ul>
  );
}
