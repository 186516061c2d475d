import type { Page } from "@parley/shared";
import { useState } from "react";
import { type AsyncState, useAsync } from "./use-async.ts";

/** The next page of a list: whether there is one, and loading it. */
export interface MorePages {
  hasMore: boolean;
  busy: boolean;
  error: unknown;
  load(): Promise<void>;
}

/**
 * A keyset-paged list: the first page on load, each further page appended by `more.load()`. The state
 * holds every item loaded so far and the cursor of the next page; `reload` starts again from the first.
 */
export function usePages<T>(
  load: (cursor?: string) => Promise<Page<T>>,
  deps: readonly unknown[],
): [AsyncState<Page<T>>, () => void, MorePages] {
  const [state, reload, set] = useAsync(() => load(), deps);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const cursor = state.status === "ready" ? state.data.nextCursor : null;
  return [
    state,
    reload,
    {
      hasMore: cursor !== null,
      busy,
      error,
      async load() {
        if (state.status !== "ready" || cursor === null) return;
        setBusy(true);
        setError(null);
        try {
          const page = await load(cursor);
          set({ items: [...state.data.items, ...page.items], nextCursor: page.nextCursor });
        } catch (caught) {
          setError(caught);
        } finally {
          setBusy(false);
        }
      },
    },
  ];
}
