import { useEffect, useRef, useSyncExternalStore } from "react";
import { cn } from "./cn.ts";

type Renderer = typeof import("./markdown-renderer.tsx").MarkdownRenderer;

/**
 * The renderer once its chunk has arrived. Not `React.lazy` under `<Suspense>`: a transcript that
 * mounts before the chunk arrives would then hold its whole first commit until it did (measured:
 * a 200-message session showed nothing for the chunk's download and parse). Here it shows plain
 * text at once and every reply turns into markdown when the renderer arrives.
 */
let renderer: Renderer | null = null;
let loading: Promise<void> | null = null;
const listeners = new Set<() => void>();

function loadRenderer(): Promise<void> {
  loading ??= import("./markdown-renderer.tsx").then(
    (module) => {
      renderer = module.MarkdownRenderer;
      for (const listener of listeners) listener();
    },
    () => {
      loading = null; // a failed chunk load is tried again by the next reply that mounts
    },
  );
  return loading;
}

const subscribe = (listener: () => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
const current = () => renderer;

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
 * markdown-renderer.tsx); until it arrives the text shows plain, and nothing waits for it.
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
  const Renderer = useSyncExternalStore(subscribe, current, current);
  useEffect(() => {
    if (!Renderer) preloadMarkdown();
  }, [Renderer]);
  return (
    <div ref={box} className="contents">
      {Renderer ? (
        <Renderer text={children} streaming={streaming} className={className} />
      ) : (
        <PlainText className={className}>{children}</PlainText>
      )}
    </div>
  );
}

const SCROLLERS =
  '[class*="overflow-x-auto"], [class*="overflow-auto"], [class*="overflow-x-scroll"]';
