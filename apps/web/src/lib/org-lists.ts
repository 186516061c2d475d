/** The org's members, projects and sessions as whole lists, for pickers (erasure, limits). */
import type { Page } from "@parley/shared";
import type { QueryKey } from "@tanstack/react-query";
import { useEffect } from "react";
import { membersApi } from "../features/members/members-api.ts";
import { orgsApi } from "./orgs-api.ts";
import { keys } from "./query.ts";
import { usePaged } from "./use-paged.ts";

/**
 * Pages a picker loads by itself before it asks for a click (20 × 50 members or projects, 20 × 100
 * sessions); past that the person presses "More …" under it.
 */
export const AUTO_PAGES = 20;

/**
 * Every page of a list, loaded one after another, for a picker (the filter runs over all) or a
 * lookup of names. `whole.loading` stays true until every page it loads by itself has answered:
 * a name looked up before then may be missing though it exists (a "former member" who is on
 * page two). `whole.error` is the first failure, of the first page or a later one.
 */
export function useWholeList<T>(
  key: QueryKey,
  load: (cursor?: string) => Promise<Page<T>>,
  enabled = true,
) {
  const paged = usePaged(key, load, { enabled });
  const pages = paged.query.data?.pages.length ?? 0;
  const { hasNextPage, isFetchingNextPage, isFetchNextPageError, fetchNextPage } = paged.query;
  const more = hasNextPage && !isFetchNextPageError && pages < AUTO_PAGES;
  const auto = more && !isFetchingNextPage;
  useEffect(() => {
    if (auto) void fetchNextPage();
  }, [auto, fetchNextPage]);
  const whole = {
    loading: paged.query.isPending || more,
    error: paged.firstPageError ?? paged.more.error,
  };
  return { ...paged, whole };
}

/** Members of the org: the same cache as the members screen. */
export const useAllMembers = (orgId: string, enabled = true) =>
  useWholeList(keys.members(orgId), (cursor) => membersApi.members(orgId, cursor), enabled);

/** People who left the org and are not erased yet (owners and admins: the erasure picker). */
export const useAllFormerMembers = (orgId: string, enabled = true) =>
  useWholeList(
    keys.formerMembers(orgId),
    (cursor) => membersApi.formerMembers(orgId, cursor),
    enabled,
  );

/** Projects of the org: the same cache as the projects screen. */
export const useAllProjects = (orgId: string, enabled = true) =>
  useWholeList(keys.projects(orgId), (cursor) => orgsApi.projects(orgId, cursor), enabled);

/** Every member's sessions (owners and admins), across projects, newest first. */
export const useAllSessions = (orgId: string, enabled = true) =>
  useWholeList(
    keys.orgSessions(orgId),
    (cursor) => orgsApi.orgSessions(orgId, { ...(cursor ? { cursor } : {}), limit: 100 }),
    enabled,
  );
