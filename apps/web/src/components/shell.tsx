import { Link, useRouterState } from "@tanstack/react-router";
import { Building2, Menu as MenuIcon } from "lucide-react";
import { lazy, type ReactNode, Suspense, useEffect } from "react";
import { cn } from "../lib/cn.ts";
import { canManage, useSession } from "../lib/session.tsx";
import { ErrorBoundary } from "./error-boundary.tsx";
import { Button } from "./ui/button.tsx";
import { VerifyBanner } from "./verify-banner.tsx";

// The menus need Radix's menu and dialog (about 30 KB gzip): they load right after the first paint,
// and until then the same buttons stand in their place, so the shell's own script stays small.
const loadMenus = () => import("./shell-menus.tsx");
const OrgSwitcher = lazy(() => loadMenus().then((m) => ({ default: m.OrgSwitcher })));
const UserMenu = lazy(() => loadMenus().then((m) => ({ default: m.UserMenu })));
const MobileMenu = lazy(() => loadMenus().then((m) => ({ default: m.MobileMenu })));

const NAV = [
  { to: "/projects", label: "Projects", manage: false },
  { to: "/billing", label: "Billing", manage: false },
  { to: "/members", label: "Members", manage: false },
  { to: "/assistants", label: "Assistants", manage: false },
  { to: "/developers", label: "Developers", manage: true },
  // The org's data rights (erasure, the org's export): owners' and admins' (pages/admin-page.tsx).
  { to: "/admin", label: "Data & privacy", manage: true },
] as const;

const navLink =
  "rounded-md px-3 py-2 font-medium text-muted-foreground text-sm transition-colors hover:bg-accent hover:text-foreground data-[status=active]:bg-accent data-[status=active]:text-foreground";

/** The main navigation; the current page is marked (`aria-current="page"`, set by the router). */
export function NavLinks({
  onNavigate,
  vertical,
}: {
  onNavigate?: () => void;
  vertical?: boolean;
}) {
  const { org } = useSession();
  return (
    <nav aria-label="Main" className={cn("flex gap-1", vertical && "flex-col")}>
      {NAV.filter((item) => !item.manage || canManage(org)).map((item) => (
        <Link key={item.to} to={item.to} className={navLink} onClick={onNavigate}>
          {item.label}
        </Link>
      ))}
    </nav>
  );
}

function OrgButtonPlaceholder({ className }: { className?: string }) {
  const { org } = useSession();
  return (
    <Button variant="ghost" size="sm" disabled className={cn("min-w-0 justify-between", className)}>
      <Building2 aria-hidden="true" />
      <span className="min-w-0 truncate">{org?.name ?? ""}</span>
    </Button>
  );
}

/**
 * The frame of every signed-in screen: one 56 px bar (brand, org, navigation, account) that holds
 * at 390 px by moving navigation into a menu, and the screen below filling the rest of the height.
 */
export function Shell({ children, inert = false }: { children: ReactNode; inert?: boolean }) {
  // The path of the screen shown, not of the one loading: keyed on the pending path, the boundary
  // remounted the old screen the moment a move began (its chat re-asked for a ticket and its
  // transcript; a removed member's, for an org they had lost: 404s in the console).
  const pathname = useRouterState({
    select: (state) => (state.resolvedLocation ?? state.location).pathname,
  });
  useEffect(() => {
    const idle = window.requestIdleCallback ?? ((run: () => void) => window.setTimeout(run, 1));
    idle(() => void loadMenus());
  }, []);
  return (
    <div className="flex min-h-dvh flex-col">
      <a
        href="#content"
        className="sr-only z-50 rounded-md bg-background px-3 py-2 focus:not-sr-only focus:fixed focus:top-2 focus:left-2"
      >
        Skip to content
      </a>
      <header className="sticky top-0 z-40 h-14 shrink-0 border-border border-b bg-background/95 backdrop-blur">
        <div className="flex h-full items-center gap-2 px-3 sm:px-4">
          <Suspense
            fallback={
              <Button
                variant="ghost"
                size="icon"
                className="md:hidden"
                disabled
                aria-label="Open menu"
              >
                <MenuIcon aria-hidden="true" />
              </Button>
            }
          >
            <MobileMenu />
          </Suspense>
          <Link to="/projects" className="shrink-0 font-semibold text-lg tracking-tight">
            Parley
          </Link>
          <div className="hidden min-w-0 max-w-56 md:block">
            <Suspense fallback={<OrgButtonPlaceholder className="w-full" />}>
              <OrgSwitcher className="w-full" />
            </Suspense>
          </div>
          <div className="hidden md:block">
            <NavLinks />
          </div>
          <div className="ml-auto flex items-center gap-1">
            <Suspense fallback={<span className="size-9" />}>
              <UserMenu />
            </Suspense>
          </div>
        </div>
      </header>
      <VerifyBanner />
      <main
        id="content"
        tabIndex={-1}
        inert={inert}
        className="flex min-h-0 flex-1 flex-col outline-none"
      >
        {/* Keyed on the path: a screen that failed does not take every other screen down with it. */}
        <ErrorBoundary key={pathname}>{children}</ErrorBoundary>
      </main>
    </div>
  );
}
