import type { Page } from "@parley/shared";
import { type QueryKey, useInfiniteQuery } from "@tanstack/react-query";

/** The next page of a list: whether there is one, and loading it. */
export interface MorePages {
  hasMore: boolean;
  busy: boolean;
  error: unknown;
  load(): Promise<void>;
}

/**
 * A keyset-paged list through the query cache: the first page on load, each further page appended
 * by `more.load()`; invalidating `key` reloads from the first page. The pages are cached under
 * `[...key, "pages"]`, so a plain `useQuery` on `key` elsewhere can never read (or overwrite) the
 * infinite query's `{ pages, pageParams }` as if it were its own data.
 */
export function usePaged<T>(
  key: QueryKey,
  load: (cursor?: string) => Promise<Page<T>>,
  options: { enabled?: boolean; refetchInterval?: number | false } = {},
) {
  const query = useInfiniteQuery({
    queryKey: [...key, "pages"],
    queryFn: ({ pageParam }) => load(pageParam),
    initialPageParam: undefined as string | undefined,
    getNextPageParam: (last) => last.nextCursor ?? undefined,
    enabled: options.enabled ?? true,
    refetchInterval: options.refetchInterval ?? false,
  });
  const items: T[] = query.data?.pages.flatMap((page) => page.items) ?? [];
  const more: MorePages = {
    hasMore: query.hasNextPage,
    busy: query.isFetchingNextPage,
    error: query.isFetchNextPageError ? query.error : null,
    async load() {
      await query.fetchNextPage();
    },
  };
  /** The first page failed (a later page's failure is `more.error`, under what loaded). */
  const firstPageError = query.isError && query.data === undefined ? query.error : null;
  return { query, items, more, firstPageError };
}
