import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import {
  createMemoryHistory,
  createRootRoute,
  createRoute,
  createRouter,
  RouterProvider,
} from "@tanstack/react-router";
import { render } from "@testing-library/react";
import type { ReactNode } from "react";
import { ConfirmProvider } from "../components/ui/confirm.tsx";

/**
 * Renders a screen or component as the app would: inside a router (in memory, starting at `path`),
 * a fresh query cache with no retries, and the confirmation dialog host. Every path renders `ui`,
 * so links and navigation work and `router.state.location` says where they went.
 */
export async function renderInApp(ui: ReactNode, { path = "/" }: { path?: string } = {}) {
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: false }, mutations: { retry: false } },
  });
  const root = createRootRoute();
  const any = createRoute({ getParentRoute: () => root, path: "$", component: () => ui });
  const index = createRoute({ getParentRoute: () => root, path: "/", component: () => ui });
  const router = createRouter({
    routeTree: root.addChildren([index, any]),
    history: createMemoryHistory({ initialEntries: [path] }),
  });
  await router.load();
  const result = render(
    <QueryClientProvider client={queryClient}>
      <ConfirmProvider>
        <RouterProvider router={router} />
      </ConfirmProvider>
    </QueryClientProvider>,
  );
  return { ...result, router, queryClient };
}
