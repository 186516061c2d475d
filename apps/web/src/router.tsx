import type { QueryClient } from "@tanstack/react-query";
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Navigate,
  Outlet,
} from "@tanstack/react-router";
import { markNavigated, Page } from "./components/page.tsx";
import { Shell } from "./components/shell.tsx";
import { Loading } from "./components/ui/states.tsx";
import { api } from "./lib/api.ts";
import { preloadChat } from "./lib/chat-preload.ts";
import { keys } from "./lib/query.ts";
import { useSession } from "./lib/session.tsx";
import { SignInPage, SignUpPage } from "./pages/auth-page.tsx";

interface RouterContext {
  queryClient: QueryClient;
}

function SplashLoading() {
  return (
    <main className="grid min-h-dvh place-items-center">
      <div className="w-64">
        <Loading label="Loading Parley…" lines={2} />
      </div>
    </main>
  );
}

const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: () => (
    <Page title="Not found">
      <p className="text-muted-foreground">There is no page at this address.</p>
    </Page>
  ),
});

/** Signed-out screens; a signed-in visitor goes to their projects. */
function AuthLayout() {
  const { me } = useSession();
  if (me === undefined) return <SplashLoading />;
  if (me) return <Navigate to="/projects" replace />;
  return (
    <main id="content" className="grid min-h-dvh place-items-center bg-muted/40 px-4 py-10">
      <Outlet />
    </main>
  );
}

/** Signed-in screens inside the shell; a signed-out visitor goes to sign-in. */
function AppLayout() {
  const { me } = useSession();
  if (me === undefined) return <SplashLoading />;
  if (me === null) return <Navigate to="/signin" replace />;
  return (
    <Shell>
      <Outlet />
    </Shell>
  );
}

const authLayout = createRoute({
  getParentRoute: () => rootRoute,
  id: "auth",
  component: AuthLayout,
});
const appLayout = createRoute({ getParentRoute: () => rootRoute, id: "app", component: AppLayout });

const signIn = createRoute({
  getParentRoute: () => authLayout,
  path: "/signin",
  // In the first bundle (about 1.5 KB): a signed-out visit paints the form without a second fetch.
  component: SignInPage,
});
const signUp = createRoute({
  getParentRoute: () => authLayout,
  path: "/signup",
  component: SignUpPage,
});

const index = createRoute({
  getParentRoute: () => appLayout,
  path: "/",
  component: () => <Navigate to="/projects" replace />,
});
const projects = createRoute({
  getParentRoute: () => appLayout,
  path: "/projects",
  component: lazyRouteComponent(() => import("./pages/projects-page.tsx")),
});
const project = createRoute({
  getParentRoute: () => appLayout,
  path: "/projects/$projectId",
  component: lazyRouteComponent(() => import("./pages/project-page.tsx")),
});
const session = createRoute({
  getParentRoute: () => appLayout,
  path: "/sessions/$sessionId",
  // What the chat needs starts with the page's chunk, not after it: the session's record, the
  // connect ticket and the transcript (not on a hover's preload: a ticket is a write).
  loader: ({ context, params, preload }) => {
    if (preload) return;
    preloadChat("assistant-agent", params.sessionId);
    void context.queryClient.prefetchQuery({
      queryKey: keys.session(params.sessionId),
      queryFn: () => api.session(params.sessionId),
    });
  },
  component: lazyRouteComponent(() => import("./pages/session-page.tsx")),
});
const billing = createRoute({
  getParentRoute: () => appLayout,
  path: "/billing",
  // `?checkout=success|cancelled` is where Stripe Checkout returns to (routes/billing.ts).
  validateSearch: (search: Record<string, unknown>): { checkout?: "success" | "cancelled" } =>
    search.checkout === "success" || search.checkout === "cancelled"
      ? { checkout: search.checkout }
      : {},
  component: lazyRouteComponent(() => import("./pages/billing-page.tsx")),
});
const members = createRoute({
  getParentRoute: () => appLayout,
  path: "/members",
  component: lazyRouteComponent(() => import("./pages/members-page.tsx")),
});
const admin = createRoute({
  getParentRoute: () => appLayout,
  path: "/admin",
  component: lazyRouteComponent(() => import("./pages/admin-page.tsx")),
});
const newOrg = createRoute({
  getParentRoute: () => appLayout,
  path: "/orgs/new",
  component: lazyRouteComponent(() => import("./pages/new-org-page.tsx")),
});
const account = createRoute({
  getParentRoute: () => appLayout,
  path: "/account",
  component: lazyRouteComponent(() => import("./pages/account-page.tsx")),
});

const routeTree = rootRoute.addChildren([
  authLayout.addChildren([signIn, signUp]),
  appLayout.addChildren([
    index,
    projects,
    project,
    session,
    billing,
    members,
    admin,
    newOrg,
    account,
  ]),
]);

export function createAppRouter(queryClient: QueryClient) {
  const router = createRouter({
    routeTree,
    context: { queryClient },
    defaultPreload: "intent",
    defaultPendingComponent: () => (
      <div className="mx-auto w-full max-w-6xl px-4 py-8 sm:px-6">
        <Loading />
      </div>
    ),
    scrollRestoration: true,
  });
  // Every navigation re-reads who the person is, so a role changed by an admin elsewhere (or a
  // removal) shows on the next screen, not after a reload; focus then moves to the new heading.
  // (Marked before the new screen mounts, so its heading takes focus from the link clicked.)
  router.subscribe("onBeforeNavigate", ({ fromLocation, toLocation }) => {
    if (fromLocation && fromLocation.pathname !== toLocation.pathname) markNavigated();
  });
  router.subscribe("onResolved", ({ fromLocation, toLocation }) => {
    if (!fromLocation || fromLocation.pathname === toLocation.pathname) return;
    void queryClient.invalidateQueries({ queryKey: keys.me });
  });
  return router;
}

export type AppRouter = ReturnType<typeof createAppRouter>;

declare module "@tanstack/react-router" {
  interface Register {
    router: AppRouter;
  }
}
