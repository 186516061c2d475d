import { useQuery } from "@tanstack/react-query";
import { api } from "../../lib/api.ts";
import { formatMicros } from "../../lib/money.ts";
import { keys } from "../../lib/query.ts";
import { canManage, useSession } from "../../lib/session.tsx";
import { limitName, RESETS, usedPct } from "./limit-words.ts";

/**
 * A soft warning in the chat before a limit stops a reply: of the limits on the signed-in
 * member's calls in this session's project, the most-used one the org's warning share says to
 * warn about (`GET /api/sessions/:id/limits`), with how much, when it resets and who can raise
 * it. Read again as each turn ends (the chat invalidates billing, and this key is under it).
 */
export function LimitWarning({ sessionId }: { sessionId: string }) {
  const { org } = useSession();
  const orgId = org?.id ?? "";
  const status = useQuery({
    queryKey: keys.sessionLimits(orgId, sessionId),
    queryFn: () => api.sessionLimits(sessionId),
    enabled: orgId !== "",
  });
  const shown = (status.data?.limits ?? [])
    .filter((limit) => limit.warning)
    .sort((a, b) => usedPct(b) - usedPct(a))[0];
  if (!shown) return null;
  const raise =
    shown.raisedBy === "you" || canManage(org)
      ? "you can raise it in Billing."
      : "an owner or admin can raise it.";
  return (
    <p
      role="status"
      className="rounded-md border border-warning/40 bg-warning/10 px-3 py-2 text-sm"
      data-testid="limit-warning"
    >
      You have used {usedPct(shown)}% of {limitName(shown)} (
      {formatMicros(shown.spentMicros, { precise: true })} of{" "}
      {formatMicros(shown.limitMicros, { precise: true })}). It resets {RESETS[shown.period]};{" "}
      {raise}
    </p>
  );
}
