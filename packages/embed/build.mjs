// Build settings both embeds share (this package's script-tag build and @parley/react), and the
// Preact aliases of the script-tag build. Plain ESM so the measuring scripts can import it too.
import { createRequire } from "node:module";
import path from "node:path";
import tailwindcss from "@tailwindcss/vite";

const here = import.meta.dirname;
const preactDir = path.dirname(createRequire(import.meta.url).resolve("preact/package.json"));

/**
 * React's modules resolved to preact/compat (absolute paths: chat-ui and the SDKs import "react"
 * from their own folders, where preact is not installed). React + react-dom are ~60 KB gzip, the
 * whole budget; Preact with compat is ~11 KB and runs the SDK's hooks (useSyncExternalStore, use).
 */
export const preactAliases = [
  { find: /^react-dom\/client$/, replacement: path.join(preactDir, "compat/client.mjs") },
  {
    find: /^react\/jsx-(dev-)?runtime$/,
    replacement: path.join(preactDir, "jsx-runtime/dist/jsxRuntime.mjs"),
  },
  { find: /^react-dom$/, replacement: path.join(preactDir, "compat/dist/compat.mjs") },
  { find: /^react$/, replacement: path.join(preactDir, "compat/dist/compat.mjs") },
];

/**
 * Stand-ins for what the embed cannot afford: tailwind-merge in chat-ui's `cn` (see src/shims),
 * and streamdown with Shiki (165 KB gzip and more), replaced by chat-ui's light markdown renderer.
 * (The chat itself is chat-ui's light client, `@parley/chat-ui/light`: no AI SDK, no agents.)
 */
export function embedShims() {
  return {
    name: "parley-embed-shims",
    enforce: "pre",
    resolveId(id, importer) {
      const from = importer?.replaceAll("\\", "/") ?? "";
      if (id === "tailwind-merge" && from.endsWith("chat-ui/src/cn.ts"))
        return path.join(here, "src/shims/tailwind-merge.ts");
      // The light markdown renderer in streamdown's place (packages/chat-ui/src/light-markdown.tsx).
      if (id === "./markdown-renderer.tsx" && from.endsWith("chat-ui/src/markdown.tsx"))
        return path.join(path.dirname(importer), "light-markdown.tsx");
      return null;
    },
  };
}

/** Tailwind (for the shadow root's stylesheet) and the shims. */
export const embedPlugins = () => [tailwindcss(), embedShims()];
