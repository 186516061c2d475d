import { type ReactNode, useEffect, useRef } from "react";
import { cn } from "../lib/cn.ts";

/** Whether the app has navigated since the page loaded (the first screen keeps the browser's focus). */
let navigated = false;
export const markNavigated = () => {
  navigated = true;
};

/**
 * Focuses `element` now, or, while an ancestor is `inert` (the shell's main area is, until the
 * navigation that mounted this screen has resolved), as soon as it no longer is. Returns a cleanup.
 */
export function focusWhenReachable(element: HTMLElement): (() => void) | undefined {
  const blocker = element.closest<HTMLElement>("[inert]");
  if (!blocker) {
    element.focus({ preventScroll: false });
    return undefined;
  }
  const observer = new MutationObserver(() => {
    if (blocker.inert) return;
    observer.disconnect();
    if (element.isConnected) element.focus({ preventScroll: false });
  });
  observer.observe(blocker, { attributes: true, attributeFilter: ["inert"] });
  return () => observer.disconnect();
}

/**
 * A screen: its title becomes the document's ("Billing · Parley"), and after a navigation focus
 * moves to its heading, so a screen reader announces the new page and Tab starts from its top.
 */
export function Page({
  title,
  heading = title,
  description,
  actions,
  children,
  className,
  width = "default",
}: {
  title: string;
  heading?: ReactNode;
  description?: ReactNode;
  actions?: ReactNode;
  children: ReactNode;
  className?: string;
  width?: "default" | "narrow" | "full";
}) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Parley`;
  }, [title]);
  useEffect(() => {
    const heading = headingRef.current;
    if (navigated && heading) return focusWhenReachable(heading);
  }, []);
  return (
    <div
      className={cn(
        "mx-auto grid w-full gap-6 px-4 py-6 sm:px-6 lg:py-8",
        width === "default" && "max-w-6xl",
        width === "narrow" && "max-w-2xl",
        className,
      )}
    >
      <div className="flex flex-wrap items-end justify-between gap-3">
        <div className="grid min-w-0 gap-1">
          <h1
            ref={headingRef}
            tabIndex={-1}
            className="wrap-anywhere font-semibold text-2xl tracking-tight outline-none"
          >
            {heading}
          </h1>
          {description ? <p className="text-muted-foreground text-sm">{description}</p> : null}
        </div>
        {actions ? <div className="flex flex-wrap items-center gap-2">{actions}</div> : null}
      </div>
      {children}
    </div>
  );
}

/** Sets the document title for a screen that lays out its own heading (the chat). */
export function useDocumentTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Parley`;
  }, [title]);
}
