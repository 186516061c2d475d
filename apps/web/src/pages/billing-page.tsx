import type { BillingSummary, LimitPeriod, LimitRule } from "@parley/shared";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate, useRouterState, useSearch } from "@tanstack/react-router";
import { ExternalLink } from "lucide-react";
import { useEffect, useRef, useState } from "react";
import { toast } from "sonner";
import { Page } from "../components/page.tsx";
import { Button } from "../components/ui/button.tsx";
import { ErrorNote, Loading, Notice } from "../components/ui/states.tsx";
import { Tabs, TabsContent, TabsList, TabsTrigger } from "../components/ui/tabs.tsx";
import { ActivityTable } from "../features/billing/activity-table.tsx";
import { AlertsList } from "../features/billing/alerts-list.tsx";
import { AutoTopUpCard } from "../features/billing/auto-top-up.tsx";
import { BalanceHero } from "../features/billing/balance-hero.tsx";
import { DocumentStorage } from "../features/billing/document-storage.tsx";
import { GrantsList } from "../features/billing/grants-list.tsx";
import { LedgerTable } from "../features/billing/ledger-table.tsx";
import { LimitRules } from "../features/billing/limit-rules.tsx";
import { readLimitHash } from "../features/billing/limit-stop.tsx";
import { LIMITS_FIRST_FIELD, LimitsForm } from "../features/billing/limits-form.tsx";
import { LimitsSummary } from "../features/billing/limits-summary.tsx";
import { MyLimits } from "../features/billing/my-limits.tsx";
import { PaymentsTable } from "../features/billing/payments-table.tsx";
import { TopUpDialog } from "../features/billing/top-up.tsx";
import { UsagePanel } from "../features/billing/usage-panel.tsx";
import { api, isApiError } from "../lib/api.ts";
import { billingApi } from "../lib/billing-api.ts";
import { formatMicros } from "../lib/money.ts";
import { keys } from "../lib/query.ts";
import { refusalText } from "../lib/refusal.ts";
import { canManage as canManageOrg, useSession } from "../lib/session.tsx";

type Tab = "overview" | "activity" | "ledger" | "settings";

/**
 * The tab an address names. `#limits` opens Settings with the limits form focused; `#limit:<code>`
 * (the chat's button when a limit stopped a message) opens the tab holding exactly that limit's
 * setting (see `limitFieldId`); `#top-up` (its "Top up") opens the top-up dialog over the
 * overview. Members have no ledger or settings (the worker refuses them those), so those hashes
 * show them the overview, where their own limit is.
 */
function tabOf(hash: string, manage: boolean): Tab {
  if (hash === "activity") return "activity";
  if (manage && hash === "ledger") return "ledger";
  if (manage && (hash === "settings" || hash === "limits")) return "settings";
  const limit = readLimitHash(hash);
  if (manage && limit && limit.subject !== "own") return "settings";
  return "overview";
}

/**
 * The field that changes the limit a `#limit:` address names: the org's monthly limit, the daily
 * limit per member (unless the member has limits of their own, which replace it for them), the
 * person's own limit, or the member's or project's limit in the rules form (filled in for it).
 * Null while the member's rules are still loading.
 */
export function limitFieldId(
  target: NonNullable<ReturnType<typeof readLimitHash>>,
  memberRules: readonly LimitRule[] | undefined,
): string | null {
  if (target.subject === "org") return LIMITS_FIRST_FIELD;
  if (target.subject === "own") return "my-limit-amount";
  if (target.subject === "member" && target.period === "day") {
    if (!memberRules) return null;
    const own = memberRules.some(
      (rule) => rule.subject === "member" && rule.subjectId === target.id,
    );
    if (!own) return "limit-memberDailyLimitMicros";
  }
  return "limit-rule-amount";
}

/** How long after Stripe's return the balance is re-read, waiting for the webhook's credit. */
const CHECKOUT_POLL_MS = 2_000;
const CHECKOUT_POLL_FOR_MS = 60_000;

interface CheckoutReturn {
  outcome: "success" | "cancel";
  at: number;
  /** The posted balance when the page came back from Stripe; polling stops once it grows. */
  postedBefore?: number;
}

/**
 * Stripe Checkout's return (`?checkout=success|cancel`): said once, then taken out of the address
 * (replace, so Back and a reload do not say it again); after a payment the balance is re-read every
 * couple of seconds until the webhook's credit lands (or a minute passes).
 */
function useCheckoutReturn(hash: string) {
  const search = useSearch({ strict: false }) as { checkout?: string };
  const navigate = useNavigate();
  const [returned, setReturned] = useState<CheckoutReturn | null>(null);
  const checkout = search.checkout;
  useEffect(() => {
    // "cancelled" is what the worker's cancel_url says; the router's search validation passes
    // "cancel" (see the report of issue 13): both are read as a cancellation.
    if (checkout === "success" || checkout === "cancel" || checkout === "cancelled") {
      setReturned({ outcome: checkout === "success" ? "success" : "cancel", at: Date.now() });
      void navigate({ to: "/billing", search: {}, hash: hash || undefined, replace: true });
    }
  }, [checkout, hash, navigate]);
  return [returned, setReturned] as const;
}

/**
 * The return from saving a card (`?card=saved|cancelled#settings`): said once, taken out of the
 * address, and the time it came back (the card shows once Stripe's webhook kept it).
 */
function useCardReturn(): number | null {
  const search = useSearch({ strict: false }) as { card?: string };
  const navigate = useNavigate();
  const [savedAt, setSavedAt] = useState<number | null>(null);
  const card = search.card;
  useEffect(() => {
    if (card !== "saved" && card !== "cancelled") return;
    if (card === "saved") {
      setSavedAt(Date.now());
      toast.success("Card saved. It shows here as soon as Stripe confirms it.");
    } else {
      toast("Saving the card was cancelled; nothing changed.");
    }
    void navigate({ to: "/billing", search: {}, hash: "settings", replace: true });
  }, [card, navigate]);
  return savedAt;
}

/**
 * Billing, laid out like Stripe's balance page and OpenRouter's credits and activity pages: the
 * balance and the limits first, spend over time and by who and what, every call, the ledger. What
 * each person sees is what the worker lets them read: members get the balance, their own usage and
 * activity; the ledger, alerts, settings and top-ups are for owners and admins.
 */
export default function BillingPage() {
  const { org } = useSession();
  const orgId = org?.id ?? "";
  const manage = org ? canManageOrg(org) : false;
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const hash = useRouterState({ select: (state) => state.location.hash });
  const [returned, setReturned] = useCheckoutReturn(hash);
  const cardReturnedAt = useCardReturn();
  const [topUpOpen, setTopUpOpen] = useState(hash === "top-up" && manage);
  const limitsField = useRef<HTMLInputElement>(null);
  const tab = tabOf(hash, manage);
  const limitTarget = readLimitHash(hash);
  // A member's limits replace the daily one for them: which one stopped them depends on these.
  const rules = useQuery({
    queryKey: keys.limitRules(orgId),
    queryFn: () => billingApi.limitRules(orgId),
    enabled: manage && limitTarget?.subject === "member",
  });

  const summary = useQuery({
    queryKey: keys.billing(orgId),
    queryFn: () => api.billing(orgId),
    enabled: orgId !== "",
    refetchInterval: (query) => {
      if (returned?.outcome !== "success") return false;
      if (Date.now() - returned.at > CHECKOUT_POLL_FOR_MS) return false;
      const posted = query.state.data?.postedMicros;
      if (returned.postedBefore !== undefined && posted !== undefined) {
        return posted > returned.postedBefore ? false : CHECKOUT_POLL_MS;
      }
      return CHECKOUT_POLL_MS;
    },
  });
  const data = summary.data;

  // The balance the page came back with, so polling knows when the credit has landed; then the
  // ledger and the reports are read again too.
  const posted = data?.postedMicros;
  useEffect(() => {
    if (returned?.outcome !== "success" || posted === undefined) return;
    if (returned.postedBefore === undefined) {
      setReturned({ ...returned, postedBefore: posted });
    } else if (posted > returned.postedBefore) {
      void queryClient.invalidateQueries({ queryKey: keys.billingLedger(orgId) });
      void queryClient.invalidateQueries({ queryKey: keys.billingPayments(orgId) });
    }
  }, [returned, posted, setReturned, queryClient, orgId]);

  const fieldId =
    hash === "limits" && manage
      ? LIMITS_FIRST_FIELD
      : limitTarget && (manage || limitTarget.subject === "own")
        ? limitFieldId(limitTarget, rules.data?.items)
        : null;
  const ready = data !== undefined;
  useEffect(() => {
    if (hash === "top-up" && manage) setTopUpOpen(true);
    if (fieldId && ready) {
      // After the tab has rendered the form.
      const id = setTimeout(() => {
        const field = document.getElementById(fieldId);
        field?.scrollIntoView({ block: "center" });
        field?.focus();
      }, 0);
      return () => clearTimeout(id);
    }
  }, [hash, manage, fieldId, ready]);
  // The rules form, filled in for the member's or project's limit the address names.
  const rulePrefill =
    limitTarget?.id && (limitTarget.subject === "member" || limitTarget.subject === "project")
      ? { target: `${limitTarget.subject}:${limitTarget.id}`, period: limitTarget.period }
      : undefined;

  const go = (next: string) =>
    void navigate({ to: "/billing", hash: next === "overview" ? undefined : next, replace: true });

  const openPortal = async () => {
    try {
      const { url } = await billingApi.billingPortal(orgId);
      window.location.assign(url);
    } catch (caught) {
      const { toast } = await import("sonner");
      // The API's words, every problem; anything else thrown may name internals.
      toast.error(isApiError(caught) ? refusalText(caught) : "Could not open the billing portal.");
    }
  };

  return (
    <Page
      title="Billing"
      description={org ? `Credits, spend and limits of ${org.name}.` : undefined}
      actions={
        manage ? (
          <Button size="sm" variant="ghost" onClick={() => void openPortal()}>
            <ExternalLink aria-hidden="true" />
            Receipts and cards
          </Button>
        ) : null
      }
    >
      {returned ? (
        returned.outcome === "success" ? (
          <Notice
            tone="success"
            action={
              <Button size="sm" variant="ghost" onClick={() => setReturned(null)}>
                Dismiss
              </Button>
            }
          >
            <strong>Payment received.</strong>{" "}
            {returned.postedBefore !== undefined &&
            posted !== undefined &&
            posted > returned.postedBefore
              ? `${formatMicros(posted - returned.postedBefore)} was added to your balance.`
              : "Credits appear as soon as Stripe confirms it."}
          </Notice>
        ) : (
          <Notice
            action={
              <Button size="sm" variant="ghost" onClick={() => setReturned(null)}>
                Dismiss
              </Button>
            }
          >
            Checkout was cancelled; nothing was charged.
          </Notice>
        )
      ) : null}
      {!org ? (
        <Notice>Pick or create an organization to see its billing.</Notice>
      ) : summary.isPending ? (
        <Loading label="Loading balance…" />
      ) : summary.isError || !data ? (
        <ErrorNote error={summary.error} retry={() => void summary.refetch()} />
      ) : (
        <Tabs value={tab} onValueChange={go} className="grid gap-6">
          <TabsList aria-label="Billing sections">
            <TabsTrigger value="overview">Overview</TabsTrigger>
            <TabsTrigger value="activity">Activity</TabsTrigger>
            {manage ? <TabsTrigger value="ledger">Ledger</TabsTrigger> : null}
            {manage ? <TabsTrigger value="settings">Settings</TabsTrigger> : null}
          </TabsList>
          <TabsContent value="overview">
            <Overview
              orgId={orgId}
              summary={data}
              manage={manage}
              onTopUp={() => setTopUpOpen(true)}
              onEditLimits={() => go("limits")}
              ownPeriod={limitTarget?.subject === "own" ? limitTarget.period : undefined}
            />
          </TabsContent>
          <TabsContent value="activity">
            <ActivityTable orgId={orgId} canManage={manage} />
          </TabsContent>
          {manage ? (
            <>
              <TabsContent value="ledger">
                <PaymentsTable orgId={orgId} />
                <LedgerTable orgId={orgId} />
              </TabsContent>
              <TabsContent value="settings">
                <div className="grid gap-6 lg:grid-cols-5">
                  <div className="min-w-0 lg:col-span-3">
                    <div className="grid gap-6">
                      <LimitsForm
                        key={orgId}
                        orgId={orgId}
                        settings={data}
                        firstFieldRef={limitsField}
                      />
                      <LimitRules
                        key={rulePrefill ? `${rulePrefill.target}:${rulePrefill.period}` : "rules"}
                        orgId={orgId}
                        prefill={rulePrefill}
                      />
                    </div>
                  </div>
                  <div className="grid min-w-0 content-start gap-6 lg:col-span-2">
                    <AutoTopUpCard orgId={orgId} cardReturnedAt={cardReturnedAt} />
                    <AlertsList orgId={orgId} webhookSet={data.alertWebhookUrl !== null} />
                  </div>
                </div>
              </TabsContent>
            </>
          ) : null}
        </Tabs>
      )}
      {manage && orgId ? (
        <TopUpDialog
          orgId={orgId}
          open={topUpOpen}
          onOpenChange={(open) => {
            setTopUpOpen(open);
            if (!open && hash === "top-up") go("overview");
          }}
        />
      ) : null}
    </Page>
  );
}

function Overview({
  orgId,
  summary,
  manage,
  onTopUp,
  onEditLimits,
  ownPeriod,
}: {
  orgId: string;
  summary: BillingSummary;
  manage: boolean;
  onTopUp: () => void;
  onEditLimits: () => void;
  /** The period of the person's own limit to fill in (the chat's "Change your limit"). */
  ownPeriod?: LimitPeriod;
}) {
  return (
    <>
      <div className="grid gap-6 lg:grid-cols-5">
        <div className="min-w-0 lg:col-span-3">
          <BalanceHero summary={summary} canManage={manage} onTopUp={onTopUp} />
          <div className="mt-6">
            <GrantsList grants={summary.grants} />
          </div>
        </div>
        <div className="grid min-w-0 content-start gap-6 lg:col-span-2">
          <LimitsSummary orgId={orgId} summary={summary} canManage={manage} onEdit={onEditLimits} />
          <DocumentStorage orgId={orgId} />
        </div>
      </div>
      <MyLimits key={ownPeriod ?? "own"} orgId={orgId} period={ownPeriod} />
      <UsagePanel orgId={orgId} canManage={manage} />
    </>
  );
}
