import type { QueryClient } from "@tanstack/react-query";
import {
  createRootRouteWithContext,
  createRoute,
  createRouter,
  Link,
  lazyRouteComponent,
  Navigate,
  Outlet,
  redirect,
  useNavigate,
} from "@tanstack/react-router";
import { lazy, Suspense, useEffect, useState } from "react";
import { markNavigated, Page } from "./components/page.tsx";
import { Loading } from "./components/ui/states.tsx";
import { api } from "./lib/api.ts";
import { preloadChat } from "./lib/chat-preload.ts";
import { safeNext } from "./lib/next-path.ts";
import { orgLeaving, refreshWho, sayOrgLost } from "./lib/org-removal.ts";
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
      <div className="grid justify-items-start gap-3">
        <p className="text-muted-foreground">There is no page at this address.</p>
        <Link to="/projects" className="prose-link font-medium">
          Go to your projects
        </Link>
      </div>
    </Page>
  ),
});

/**
 * A visitor who is signed in already goes where they were headed (`?next=`), else to their
 * projects. Read from the window once (see `ToSignIn`).
 */
function ToApp() {
  const navigate = useNavigate();
  const [next] = useState(() => safeNext(new URLSearchParams(window.location.search).get("next")));
  useEffect(() => {
    void (next
      ? navigate({ href: next, replace: true })
      : navigate({ to: "/projects", replace: true }));
  }, [next, navigate]);
  return <SplashLoading />;
}

/** Signed-out screens; a signed-in visitor goes on into the app. */
function AuthLayout() {
  const { me } = useSession();
  if (me === undefined) return <SplashLoading />;
  if (me) return <ToApp />;
  return (
    <main id="content" className="grid min-h-dvh place-items-center bg-muted/40 px-4 py-10">
      <Outlet />
    </main>
  );
}

/**
 * Sends a signed-out visitor to sign-in, with where they were headed (`?next=`). Read from the
 * window once, not from the router: a subscription would re-render this on every navigation, and
 * each render of `<Navigate>` navigates again.
 */
function ToSignIn() {
  const [search] = useState(() => {
    const next = safeNext(window.location.pathname + window.location.search + window.location.hash);
    return next && next !== "/" && next !== "/projects" ? { next } : {};
  });
  return <Navigate to="/signin" search={search} replace />;
}

// The signed-in frame (the bar, its banner, org-removal notices) is a chunk of its own, fetched as
// the app layout's route starts loading, beside the screen's own chunk: signed-out visitors never
// load it, and the shell's initial JavaScript stays within its budget (docs/2026-12-01-web.md).
const loadSignedIn = () => import("./components/signed-in.tsx");
const SignedIn = lazy(loadSignedIn);

/** Signed-in screens inside the shell; a signed-out visitor goes to sign-in, and back here after. */
function AppLayout() {
  const { me } = useSession();
  if (me === undefined) return <SplashLoading />;
  if (me === null) return <ToSignIn />;
  return (
    <Suspense fallback={<SplashLoading />}>
      <SignedIn />
    </Suspense>
  );
}

const authLayout = createRoute({
  getParentRoute: () => rootRoute,
  id: "auth",
  component: AuthLayout,
});
/** The screen the app layout last loaded (a change of tab or hash on it is no move). */
let shownPath: string | null = null;
const appLayout = createRoute({
  getParentRoute: () => rootRoute,
  id: "app",
  // Every move to another screen re-reads who the person is before that screen asks for anything,
  // so a role changed or a removal by an admin elsewhere shows on it (a removed member is sent to
  // their projects with a notice, see org-removal.ts) instead of its calls answering 403 or 404.
  // Not on the first load (the session's own read is under way) nor a hover's preload.
  beforeLoad: async ({ context, preload, location }) => {
    void loadSignedIn();
    if (preload) return;
    const moved = shownPath !== null && shownPath !== location.pathname;
    shownPath = location.pathname;
    if (!moved || context.queryClient.getQueryData(keys.me) === undefined) return;
    const lost = await refreshWho(context.queryClient);
    if (lost && location.pathname !== "/projects")
      throw redirect({ to: "/projects", replace: true });
  },
  component: AppLayout,
});

/** `?next=`: the page to open after signing in (checked by `safeNext`). */
const validateNext = (search: Record<string, unknown>): { next?: string } => {
  const next = safeNext(search.next);
  return next ? { next } : {};
};

const signIn = createRoute({
  getParentRoute: () => authLayout,
  path: "/signin",
  validateSearch: validateNext,
  // In the first bundle (about 1.5 KB): a signed-out visit paints the form without a second fetch.
  component: SignInPage,
});
const signUp = createRoute({
  getParentRoute: () => authLayout,
  path: "/signup",
  validateSearch: validateNext,
  component: SignUpPage,
});

/** Mail (docs/2026-12-06-mail.md): asking for a reset link is for signed-out visitors. */
const forgotPassword = createRoute({
  getParentRoute: () => authLayout,
  path: "/forgot-password",
  component: lazyRouteComponent(() =>
    import("./pages/recovery-pages.tsx").then((m) => ({ default: m.ForgotPasswordPage })),
  ),
});
/** A mailed link's page, signed in or out; the secret is in the fragment. */
const resetPassword = createRoute({
  getParentRoute: () => rootRoute,
  path: "/reset-password",
  component: lazyRouteComponent(() =>
    import("./pages/recovery-pages.tsx").then((m) => ({ default: m.ResetPasswordPage })),
  ),
});
const verifyEmail = createRoute({
  getParentRoute: () => rootRoute,
  path: "/verify-email",
  component: lazyRouteComponent(() => import("./pages/verify-email-page.tsx")),
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
/**
 * A project's documents (issue 31): upload, versions, indexing, deletion, the org's storage.
 * Loaded through the project page's chunk (`DocumentsRoute` there lazy-loads the page itself):
 * the same import as the project route's, so the shell names no new chunk and its list of
 * chunks to preload (the 120 KB budget had no room for one more); the page is reached from the
 * project, whose chunk is then loaded already.
 */
const documents = createRoute({
  getParentRoute: () => appLayout,
  path: "/projects/$projectId/documents",
  component: lazyRouteComponent(() => import("./pages/project-page.tsx"), "DocumentsRoute"),
});
const session = createRoute({
  getParentRoute: () => appLayout,
  path: "/sessions/$sessionId",
  // What the chat needs starts with the page's chunk, not after it: the session's record, the
  // connect ticket and the transcript (not on a hover's preload: a ticket is a write).
  loader: ({ context, params, preload }) => {
    // Signed out, nothing is asked for: the layout sends the visitor to sign in first.
    if (preload || (!api.hasToken() && !api.mayHaveSession())) return;
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
  // `?checkout=success|cancelled` is where Stripe Checkout returns to (routes/billing.ts), and
  // `?card=saved|cancelled` where saving a card for automatic top-up does.
  validateSearch: (
    search: Record<string, unknown>,
  ): { checkout?: "success" | "cancelled"; card?: "saved" | "cancelled" } => ({
    ...(search.checkout === "success" || search.checkout === "cancelled"
      ? { checkout: search.checkout }
      : {}),
    ...(search.card === "saved" || search.card === "cancelled" ? { card: search.card } : {}),
  }),
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
/** The org's assistant profiles and allowed models (issue 29); `#models` opens the models. */
const assistants = createRoute({
  getParentRoute: () => appLayout,
  path: "/assistants",
  component: lazyRouteComponent(() => import("./pages/assistants-page.tsx")),
});
const profile = createRoute({
  getParentRoute: () => appLayout,
  path: "/assistants/profiles/$profileId",
  component: lazyRouteComponent(() => import("./pages/profile-page.tsx")),
});
/** The developers' area (issue 32.1): apps and API keys (`#keys`), and one app's page. */
const developers = createRoute({
  getParentRoute: () => appLayout,
  path: "/developers",
  component: lazyRouteComponent(() => import("./features/developers/developers-page.tsx")),
});
const developerApp = createRoute({
  getParentRoute: () => appLayout,
  path: "/developers/apps/$appId",
  component: lazyRouteComponent(() => import("./features/developers/app-page.tsx")),
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

/** An invitation link, `/invite#secret`: readable signed in or out (pages/invite-page.tsx). */
const invite = createRoute({
  getParentRoute: () => rootRoute,
  path: "/invite",
  component: lazyRouteComponent(() => import("./pages/invite-page.tsx")),
});
/** A link of the first form, the secret in the path: it moves to the fragment. */
const invitePathForm = createRoute({
  getParentRoute: () => rootRoute,
  path: "/invite/$secret",
  component: lazyRouteComponent(() => import("./pages/invite-page.tsx")),
});

const routeTree = rootRoute.addChildren([
  invite,
  invitePathForm,
  resetPassword,
  verifyEmail,
  authLayout.addChildren([signIn, signUp, forgotPassword]),
  appLayout.addChildren([
    index,
    projects,
    project,
    documents,
    session,
    billing,
    members,
    admin,
    assistants,
    profile,
    developers,
    developerApp,
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
  // Every navigation re-reads who the person is (the app layout's beforeLoad); focus then moves to
  // the new heading. (Marked before the new screen mounts, so its heading takes focus from the
  // link clicked.)
  router.subscribe("onBeforeNavigate", ({ fromLocation, toLocation }) => {
    if (fromLocation && fromLocation.pathname !== toLocation.pathname) markNavigated();
  });
  // Sent on after losing an org (org-removal.ts): once there, the screens come back, with why.
  router.subscribe("onResolved", ({ toLocation }) => {
    const lost = orgLeaving.get();
    // Only once their projects are the screen: the aborted move resolves first, on the old one.
    if (!lost || toLocation.pathname !== "/projects") return;
    orgLeaving.set(null);
    sayOrgLost(lost);
  });
  return router;
}

export type AppRouter = ReturnType<typeof createAppRouter>;

declare module "@tanstack/react-router" {
  interface Register {
    router: AppRouter;
  }
}
