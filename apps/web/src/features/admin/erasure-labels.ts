import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback } from "react";
import { keys } from "../../lib/query.ts";

type Labels = Record<string, string>;

/**
 * What this tab filed erasures of, by request id: the server keeps only a keyed hash of a subject,
 * so a request's name is known only where it was filed, and only until a reload (it is the
 * subject's personal data: it is not written to storage).
 */
export function useErasureLabels(orgId: string) {
  const queryClient = useQueryClient();
  const key = keys.erasureLabels(orgId);
  // The query function returns what is cached: an invalidation of the org's keys keeps the names.
  const { data } = useQuery({
    queryKey: key,
    queryFn: () => queryClient.getQueryData<Labels>(key) ?? {},
    initialData: {},
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: Number.POSITIVE_INFINITY,
  });
  const remember = useCallback(
    (requestId: string, label: string) =>
      queryClient.setQueryData<Labels>(keys.erasureLabels(orgId), (old) => ({
        ...old,
        [requestId]: label,
      })),
    [queryClient, orgId],
  );
  return { labels: data, remember };
}
