import type { Grant, GrantSource, LedgerEntry } from "@parley/shared";
import { Card, CardBody, CardHeader } from "../../components/ui/card.tsx";
import { formatMicros } from "../../lib/money.ts";

export const GRANT_SOURCE_LABELS: Record<GrantSource, string> = {
  signup: "Sign-up grant",
  promotion: "Promotion",
  top_up: "Top-up",
  monthly_allowance: "Monthly allowance",
  legacy: "Earlier balance",
  adjustment: "Adjustment",
};

/** "expires Dec 31, 2026" (UTC, as the ledger keeps it), or "no expiry". */
export function expiryLabel(expiresAt: string | null): string {
  if (expiresAt === null) return "no expiry";
  const day = new Date(expiresAt).toLocaleDateString("en-US", {
    month: "short",
    day: "numeric",
    year: "numeric",
    timeZone: "UTC",
  });
  return `expires ${day}`;
}

/** A ledger row's grant, in words: "Promotion granted", "Monthly allowance expired"; null if none. */
export function grantEventLabel(entry: LedgerEntry): string | null {
  if (entry.grantSource === null || entry.grantEvent === null) return null;
  const source = GRANT_SOURCE_LABELS[entry.grantSource] ?? entry.grantSource;
  return entry.grantEvent === "expired" ? `${source} expired (unused credits)` : source;
}

/**
 * The grants whose credits are left, in the order usage spends them (soonest-expiring first), so
 * a reader sees what expires and when.
 */
export function GrantsList({ grants }: { grants: Grant[] }) {
  if (grants.length === 0) return null;
  return (
    <Card>
      <CardHeader
        title="Credits by grant"
        description="Spent in this order: soonest expiry first."
      />
      <CardBody>
        <ul className="divide-y" data-testid="grants">
          {grants.map((grant) => (
            <li key={grant.id} className="flex flex-wrap items-baseline justify-between gap-2 py-2">
              <span>
                <span className="font-medium">
                  {GRANT_SOURCE_LABELS[grant.source] ?? grant.source}
                </span>{" "}
                <span className="text-muted-foreground text-sm">
                  {expiryLabel(grant.expiresAt)}
                </span>
              </span>
              <span className="tabular-nums">
                {/* In the balance's own figures (cents, rounded down): one way to read money on
                    the card; every micro-dollar is in the ledger and behind "Exact amount". */}
                {formatMicros(grant.remainingMicros, { floor: true })}
                <span className="text-muted-foreground text-sm">
                  {" "}
                  of {formatMicros(grant.grantedMicros, { floor: true })}
                </span>
              </span>
            </li>
          ))}
        </ul>
      </CardBody>
    </Card>
  );
}
