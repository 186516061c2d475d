import type { ReactNode } from "react";
import { createRoot, type Root } from "react-dom/client";
import { adoptStyles } from "./shadow-css.ts";
import css from "./styles.css?inline";

/**
 * The shadow root the assistant lives in, with its stylesheet. The host page's CSS cannot select
 * anything inside it, and the assistant's Tailwind (its preflight resets included) cannot touch
 * the page; only inherited custom properties (`--parley-*`) cross, by design.
 */
export function assistantShadowRoot(host: HTMLElement): ShadowRoot {
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  adoptStyles(root, css);
  return root;
}

/** A React (or, in the script-tag build, Preact) root rendering into the host's shadow root. */
export function mountInShadow(host: HTMLElement): {
  render(node: ReactNode): void;
  unmount(): void;
} {
  const shadow = assistantShadowRoot(host);
  let container = shadow.querySelector<HTMLElement>("div[data-parley-container]");
  if (!container) {
    container = document.createElement("div");
    container.dataset.parleyContainer = "";
    container.style.height = "100%";
    shadow.append(container);
  }
  let root: Root | null = createRoot(container);
  return {
    render(node) {
      root?.render(node);
    },
    unmount() {
      root?.unmount();
      root = null;
    },
  };
}
