import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { useState } from "react";
import { ConfirmProvider } from "./components/ui/confirm.tsx";
import { Toaster } from "./components/ui/toaster.tsx";
import { createQueryClient } from "./lib/query.ts";
import { SessionProvider } from "./lib/session.tsx";
import { createAppRouter } from "./router.tsx";

/** The web app: data cache, session, confirmations and toasts around the router. */
export function App() {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(() => createAppRouter(queryClient));
  return (
    <QueryClientProvider client={queryClient}>
      <SessionProvider>
        <ConfirmProvider>
          <RouterProvider router={router} />
          <Toaster />
        </ConfirmProvider>
      </SessionProvider>
    </QueryClientProvider>
  );
}
