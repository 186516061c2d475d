/**
 * Transitional: the hand-written router's API over TanStack Router, for screens not yet moved to
 * `@tanstack/react-router`'s own `Link` and `useNavigate`. Remove once nothing imports it.
 */
import { Link as RouterLink, useRouter, useRouterState } from "@tanstack/react-router";
import type { AnchorHTMLAttributes, ReactNode } from "react";

let current: ReturnType<typeof useRouter> | null = null;

/** Remembers the app's router so plain functions can navigate (set once by `App`). */
export function useRegisterRouter(): void {
  current = useRouter();
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = new URL(to, window.location.origin);
  void current?.navigate({
    to: url.pathname,
    search: Object.fromEntries(url.searchParams),
    replace: options.replace ?? false,
  } as never);
}

export function useLocation(): { pathname: string; search: URLSearchParams } {
  const location = useRouterState({ select: (state) => state.location });
  return { pathname: location.pathname, search: new URLSearchParams(location.searchStr) };
}

export function Link({
  to,
  children,
  ...rest
}: { to: string; children: ReactNode } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  return (
    <RouterLink to={to as never} {...rest}>
      {children}
    </RouterLink>
  );
}
