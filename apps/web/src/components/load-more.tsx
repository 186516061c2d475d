import type { MorePages } from "../lib/use-pages.ts";
import { FormError } from "./field-error.tsx";

/** "Load more" under a paged list, with the error of a page that failed; nothing at the end. */
export function LoadMore({ more, label = "Load more" }: { more: MorePages; label?: string }) {
  if (!more.hasMore && more.error === null) return null;
  return (
    <div className="stack">
      <FormError error={more.error} />
      {more.hasMore ? (
        <button type="button" onClick={() => void more.load()} disabled={more.busy}>
          {more.busy ? "Loading…" : label}
        </button>
      ) : null}
    </div>
  );
}
