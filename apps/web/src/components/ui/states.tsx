import type { ReactNode } from "react";
import { cn } from "../../lib/cn.ts";
import { refusalSentences } from "../../lib/refusal.ts";
import { Button } from "./button.tsx";

/** A grey placeholder block while something loads (announced once by `Loading`). */
export function Skeleton({ className }: { className?: string }) {
  return <div aria-hidden="true" className={cn("animate-pulse rounded-md bg-muted", className)} />;
}

/** "Loading…" for screen readers with skeleton lines for the eye. */
export function Loading({ label = "Loading…", lines = 3 }: { label?: string; lines?: number }) {
  return (
    <div role="status" className="grid gap-2">
      <span className="sr-only">{label}</span>
      {Array.from({ length: lines }, (_, index) => (
        <Skeleton
          key={String(index)}
          className={cn("h-4", index === lines - 1 ? "w-2/3" : "w-full")}
        />
      ))}
    </div>
  );
}

/** What a list shows when it has nothing yet, and the action that fills it. */
export function EmptyState({
  title,
  children,
  action,
  icon,
}: {
  title: string;
  children?: ReactNode;
  action?: ReactNode;
  icon?: ReactNode;
}) {
  return (
    <div className="grid justify-items-center gap-2 rounded-lg border border-border border-dashed px-6 py-10 text-center">
      {icon ? <div className="text-muted-foreground [&_svg]:size-8">{icon}</div> : null}
      <p className="font-medium">{title}</p>
      {children ? (
        <div className="max-w-prose text-muted-foreground text-sm">{children}</div>
      ) : null}
      {action ? <div className="pt-2">{action}</div> : null}
    </div>
  );
}

/**
 * A failed load or action, in words, with a retry when one makes sense: every problem the API
 * named, each a sentence (a form shows those of its fields under them: `RefusalNote`).
 */
export function ErrorNote({ error, retry }: { error: unknown; retry?: () => void }) {
  if (error === null || error === undefined) return null;
  return <ProblemNote sentences={refusalSentences(error)} retry={retry} />;
}

/** The box of `ErrorNote` and `RefusalNote`: one alert, a sentence a line. */
export function ProblemNote({
  sentences,
  retry,
}: {
  sentences: readonly string[];
  retry?: (() => void) | undefined;
}) {
  if (sentences.length === 0) return null;
  return (
    <div
      role="alert"
      className="flex flex-wrap items-center justify-between gap-3 rounded-md border border-destructive/40 bg-destructive/10 px-3 py-2 text-destructive text-sm"
    >
      {sentences.length === 1 ? (
        <span>{sentences[0]}</span>
      ) : (
        <ul className="grid list-disc gap-1 pl-5">
          {sentences.map((text) => (
            <li key={text}>{text}</li>
          ))}
        </ul>
      )}
      {retry ? (
        <Button size="sm" onClick={retry}>
          Try again
        </Button>
      ) : null}
    </div>
  );
}

/** A calm note (info) or a warning in a box, for notices that are not errors. */
export function Notice({
  tone = "info",
  children,
  action,
}: {
  tone?: "info" | "warning" | "success";
  children: ReactNode;
  action?: ReactNode;
}) {
  return (
    <div
      role="status"
      className={cn(
        "flex flex-wrap items-center justify-between gap-3 rounded-md border px-3 py-2 text-sm",
        tone === "info" && "border-border bg-muted text-foreground",
        tone === "warning" && "border-warning/40 bg-warning/10 text-foreground",
        tone === "success" && "border-success/40 bg-success/10 text-foreground",
      )}
    >
      <div className="min-w-0">{children}</div>
      {action}
    </div>
  );
}
