import { lazy, Suspense, useEffect, useState } from "react";
import { useTheme } from "../../lib/theme.ts";

const SonnerToaster = lazy(() => import("sonner").then((m) => ({ default: m.Toaster })));

/**
 * Where toasts (`toast()` from sonner) appear. The library loads after the first paint: nothing
 * can toast before a screen is up.
 */
export function Toaster() {
  const [theme] = useTheme();
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(true), []);
  if (!ready) return null;
  return (
    <Suspense fallback={null}>
      <SonnerToaster position="bottom-right" theme={theme} closeButton />
    </Suspense>
  );
}
