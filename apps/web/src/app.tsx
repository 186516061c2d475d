import { QueryClientProvider } from "@tanstack/react-query";
import { RouterProvider } from "@tanstack/react-router";
import { useState } from "react";
import { ConfirmProvider } from "./components/ui/confirm.tsx";
import { Toaster } from "./components/ui/toaster.tsx";
import { createQueryClient } from "./lib/query.ts";
import { useRegisterRouter } from "./lib/router.tsx";
import { SessionProvider } from "./lib/session.tsx";
import { createAppRouter } from "./router.tsx";

function RegisterRouter() {
  useRegisterRouter();
  return null;
}

/** The web app: data cache, session, confirmations and toasts around the router. */
export function App() {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(() => createAppRouter(queryClient));
  return (
    <QueryClientProvider client={queryClient}>
      <SessionProvider>
        <ConfirmProvider>
          <RouterProvider router={router} InnerWrap={InnerWrap} />
          <Toaster />
        </ConfirmProvider>
      </SessionProvider>
    </QueryClientProvider>
  );
}

function InnerWrap({ children }: { children: React.ReactNode }) {
  return (
    <>
      <RegisterRouter />
      {children}
    </>
  );
}
