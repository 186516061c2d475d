import { lazy, Suspense, useEffect, useRef } from "react";
import { cn } from "./cn.ts";

const loadRenderer = () => import("./markdown-renderer.tsx");
const LazyRenderer = lazy(() =>
  loadRenderer().then(({ MarkdownRenderer }) => ({ default: MarkdownRenderer })),
);

/**
 * Starts fetching the markdown renderer (streamdown) before the first reply needs it. ChatView
 * calls it on mount; an app may call it earlier, e.g. when a chat route starts loading.
 */
export function preloadMarkdown(): void {
  void loadRenderer();
}

/**
 * Text exactly as written, whitespace kept, never parsed: what a person typed must not turn into
 * headings or links. Also the fallback while the markdown renderer loads, so a reply is readable
 * from its first byte.
 */
export function PlainText({ children, className }: { children: string; className?: string }) {
  return <div className={cn("whitespace-pre-wrap break-words", className)}>{children}</div>;
}

/**
 * An assistant reply's markdown (GFM: headings, lists, tables, fenced code with highlighting and a
 * copy button per block), safe to render while it streams (`streaming` closes unfinished syntax
 * instead of flashing it). Raw HTML is sanitized by streamdown. The renderer loads lazily (see
 * markdown-renderer.tsx); until it arrives the text shows plain.
 */
export function Markdown({
  children,
  streaming = false,
  className,
}: {
  children: string;
  streaming?: boolean;
  className?: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  // streamdown wraps wide tables and code in boxes that scroll sideways (on a phone they do): a
  // keyboard must be able to reach and scroll them (WCAG 2.1.1, axe scrollable-region-focusable).
  // Watched, not only run once: the renderer arrives lazily and the text streams in.
  useEffect(() => {
    const root = box.current;
    if (!root) return;
    const reach = () => {
      for (const element of root.querySelectorAll<HTMLElement>(SCROLLERS)) {
        if (!element.hasAttribute("tabindex")) element.tabIndex = 0;
      }
    };
    reach();
    const observer = new MutationObserver(reach);
    observer.observe(root, { childList: true, subtree: true });
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={box} className="contents">
      <Suspense fallback={<PlainText className={className}>{children}</PlainText>}>
        <LazyRenderer text={children} streaming={streaming} className={className} />
      </Suspense>
    </div>
  );
}

const SCROLLERS =
  '[class*="overflow-x-auto"], [class*="overflow-auto"], [class*="overflow-x-scroll"]';
