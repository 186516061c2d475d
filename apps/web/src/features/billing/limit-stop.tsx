import type { ParleyError } from "@parley/chat-ui";
import type { LimitPeriod } from "@parley/shared";
import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { CircleAlert } from "lucide-react";
import { buttonVariants } from "../../components/ui/button.tsx";
import { api } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { canManage, useSession } from "../../lib/session.tsx";
import { limitName, RESETS } from "./limit-words.ts";

const PERIODS: Record<string, LimitPeriod> = { daily: "day", weekly: "week", monthly: "month" };
const ADJECTIVES: Record<LimitPeriod, string> = { day: "daily", week: "weekly", month: "monthly" };

/** A spend limit's code (`member_weekly`) as who it limits and over what period; null if unknown. */
export function parseLimit(
  limit: string,
): { subject: "org" | "member" | "own" | "project"; period: LimitPeriod } | null {
  const match = /^(org|member|own|project)_(daily|weekly|monthly)$/.exec(limit);
  const period = match ? PERIODS[match[2] ?? ""] : undefined;
  if (!match || !period) return null;
  return { subject: match[1] as "org" | "member" | "own" | "project", period };
}

/**
 * Where exactly a limit is changed, as the billing page's address fragment: `limit:<code>` with
 * the member's or project's id when the limit is theirs. The billing page opens the tab holding
 * that setting and puts the cursor in it (see `limitField`).
 */
export function limitHash(limit: string, ids: { userId: string; projectId?: string }): string {
  const parsed = parseLimit(limit);
  if (!parsed) return "limits";
  if (parsed.subject === "member") return `limit:${limit}:${ids.userId}`;
  if (parsed.subject === "project" && ids.projectId) return `limit:${limit}:${ids.projectId}`;
  return `limit:${limit}`;
}

/** A `limit:` fragment read back: the limit's code and whose it is. */
export function readLimitHash(hash: string): {
  limit: string;
  subject: "org" | "member" | "own" | "project";
  period: LimitPeriod;
  id?: string;
} | null {
  const [kind, limit = "", id] = hash.split(":");
  if (kind !== "limit") return null;
  const parsed = parseLimit(limit);
  if (!parsed) return null;
  return { limit, ...parsed, ...(id ? { id } : {}) };
}

/**
 * What the chat offers for a refused message, by who is reading: an own limit is theirs to change;
 * any other limit is raised by owners and admins (a member is told to ask); no credits: a top-up.
 */
export function stopSetting(
  refusal: Pick<ParleyError, "code" | "details">,
  who: { manage: boolean; userId: string; projectId?: string },
): { kind: "link"; label: string; hash: string } | { kind: "note"; label: string } {
  if (refusal.code === "insufficient_credits") {
    return who.manage
      ? { kind: "link", label: "Top up", hash: "top-up" }
      : { kind: "note", label: "Ask an owner or admin to top up credits." };
  }
  const limit = refusal.details?.limit ?? "";
  const parsed = parseLimit(limit);
  if (parsed?.subject === "own") {
    return { kind: "link", label: "Change your limit", hash: limitHash(limit, who) };
  }
  if (!who.manage) return { kind: "note", label: "Ask an owner or admin to raise it." };
  const adjective = parsed ? ADJECTIVES[parsed.period] : "";
  const label =
    parsed?.subject === "org"
      ? "Raise the monthly limit"
      : parsed?.subject === "project"
        ? `Raise this project's ${adjective} limit`
        : parsed?.subject === "member"
          ? `Raise your ${adjective} limit`
          : "Raise the limit";
  return { kind: "link", label, hash: limitHash(limit, who) };
}

const hoursUntil = (iso: string | undefined): string | null => {
  if (!iso) return null;
  const ms = Date.parse(iso) - Date.now();
  if (!Number.isFinite(ms) || ms <= 0) return null;
  const hours = Math.ceil(ms / 3_600_000);
  if (hours < 48) return hours === 1 ? "in under an hour" : `in ${hours} hours`;
  return `in ${Math.round(hours / 24)} days`;
};

/**
 * The one notice above the composer when a message was refused for money: which limit stopped
 * it, how much of it is used, when it resets, and a button to exactly the setting that lifts it
 * (or who to ask). A refused message is back in the box, so sending it again is one key.
 */
export function LimitStop({
  refusal,
  sessionId,
  projectId,
}: {
  refusal: ParleyError;
  sessionId: string;
  projectId?: string;
}) {
  const { org, me } = useSession();
  const orgId = org?.id ?? "";
  const limit = refusal.details?.limit;
  // The same read as the warning (cached under billing, read again as each turn ends).
  const status = useQuery({
    queryKey: keys.sessionLimits(orgId, sessionId),
    queryFn: () => api.sessionLimits(sessionId),
    enabled: orgId !== "" && refusal.code === "spend_limit",
  });
  const state = status.data?.limits.find((one) => one.limit === limit);
  const parsed = limit ? parseLimit(limit) : null;
  const period = parsed?.period ?? (refusal.details?.period as LimitPeriod | undefined);
  const action = stopSetting(refusal, {
    manage: canManage(org),
    userId: me?.id ?? "",
    ...(projectId ? { projectId } : {}),
  });
  const title =
    refusal.code === "insufficient_credits"
      ? "Your organization is out of credits."
      : parsed && period
        ? `This message would go over ${limitName({ limit: limit ?? "", period })}.`
        : refusal.message;
  const soon = hoursUntil(state?.resetsAt ?? refusal.details?.resetsAt);
  return (
    <div
      role="alert"
      data-testid="limit-stop"
      className="mb-1 flex flex-wrap items-center gap-x-3 gap-y-2 rounded-md border border-destructive/50 bg-destructive/5 px-3 py-2 text-sm"
    >
      <CircleAlert aria-hidden="true" className="size-4 shrink-0 text-destructive" />
      {/* Wide enough to read: on a phone the button goes under the words, not beside them. */}
      <div className="min-w-[14rem] flex-1">
        <p className="font-medium">{title}</p>
        <p className="text-muted-foreground">
          {state
            ? `${formatMicros(state.spentMicros, { precise: true })} of ${formatMicros(
                state.limitMicros,
                { precise: true },
              )} used. `
            : ""}
          {refusal.code === "spend_limit" && period
            ? `It resets ${RESETS[period]}${soon ? ` (${soon})` : ""}. `
            : ""}
          Nothing was sent or charged.
          {action.kind === "note" ? ` ${action.label}` : ""}
        </p>
      </div>
      {action.kind === "link" ? (
        <Link
          to="/billing"
          hash={action.hash}
          className={`${buttonVariants({ variant: "primary", size: "sm" })} ml-7 sm:ml-0`}
        >
          {action.label}
        </Link>
      ) : null}
    </div>
  );
}
