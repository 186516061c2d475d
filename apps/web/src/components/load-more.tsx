import type { MorePages } from "../lib/use-paged.ts";
import { Button } from "./ui/button.tsx";
import { ErrorNote } from "./ui/states.tsx";

/** "Load more" under a paged list, with the error of a page that failed; nothing at the end. */
export function LoadMore({ more, label = "Load more" }: { more: MorePages; label?: string }) {
  if (!more.hasMore && more.error === null) return null;
  return (
    <div className="grid justify-items-center gap-2 pt-2">
      <ErrorNote error={more.error} />
      {more.hasMore ? (
        <Button size="sm" onClick={() => void more.load()} disabled={more.busy}>
          {more.busy ? "Loading…" : label}
        </Button>
      ) : null}
    </div>
  );
}
