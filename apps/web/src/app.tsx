import { type ComponentType, lazy, Suspense, useEffect } from "react";
import { ErrorBoundary } from "./components/error-boundary.tsx";
import { Shell } from "./components/shell.tsx";
import { matchPath, navigate, useLocation } from "./lib/router.tsx";
import { SessionProvider, useSession } from "./lib/session.tsx";

// Every screen is its own chunk; the initial load carries only the shell, router and API client.
const AuthPage = lazy(() => import("./pages/auth-page.tsx"));
const ProjectsPage = lazy(() => import("./pages/projects-page.tsx"));
const ProjectPage = lazy(() => import("./pages/project-page.tsx"));
const SessionPage = lazy(() => import("./pages/session-page.tsx"));
const BillingPage = lazy(() => import("./pages/billing-page.tsx"));
const MembersPage = lazy(() => import("./pages/members-page.tsx"));
const AdminPage = lazy(() => import("./pages/admin-page.tsx"));
const NewOrgPage = lazy(() => import("./pages/new-org-page.tsx"));

type Params = Record<string, string>;
const routes: { pattern: string; page: ComponentType<{ params: Params }> }[] = [
  { pattern: "/projects", page: ProjectsPage },
  { pattern: "/projects/:projectId", page: ProjectPage },
  { pattern: "/sessions/:sessionId", page: SessionPage },
  { pattern: "/billing", page: BillingPage },
  { pattern: "/members", page: MembersPage },
  { pattern: "/admin", page: AdminPage },
  { pattern: "/orgs/new", page: NewOrgPage },
];

export function App() {
  return (
    <SessionProvider>
      <Router />
    </SessionProvider>
  );
}

function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}

function Router() {
  const { pathname } = useLocation();
  const { me } = useSession();
  const isAuthPage = pathname === "/signin" || pathname === "/signup";

  useEffect(() => {
    if (me === undefined) return;
    if (me === null && !isAuthPage) navigate("/signin", { replace: true });
    else if (me && (isAuthPage || pathname === "/")) navigate("/projects", { replace: true });
  }, [me, isAuthPage, pathname]);

  if (me === undefined) {
    return (
      <main className="center">
        <Loading />
      </main>
    );
  }
  if (isAuthPage || me === null) {
    return (
      <main className="center">
        <Suspense fallback={<Loading />}>
          <AuthPage mode={pathname === "/signup" ? "signup" : "signin"} />
        </Suspense>
      </main>
    );
  }
  const route = routes
    .map((candidate) => ({ ...candidate, params: matchPath(candidate.pattern, pathname) }))
    .find((candidate) => candidate.params !== null);
  return (
    <Shell>
      <ErrorBoundary key={pathname}>
        <Suspense fallback={<Loading />}>
          {route?.params ? (
            <route.page params={route.params} />
          ) : (
            <section>
              <h1>Not found</h1>
              <p>There is no page at this address.</p>
            </section>
          )}
        </Suspense>
      </ErrorBoundary>
    </Shell>
  );
}
