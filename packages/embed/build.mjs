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
 * Stand-ins for two libraries the embed never needs (see src/shims): capnweb, which agents/react
 * imports for a transport the chat does not use, and tailwind-merge in chat-ui's `cn` (streamdown's
 * lazy chunk keeps the real one).
 */
export function embedShims() {
  return {
    name: "parley-embed-shims",
    enforce: "pre",
    resolveId(id, importer) {
      if (id === "capnweb") return path.join(here, "src/shims/capnweb.ts");
      if (id === "tailwind-merge" && importer?.replaceAll("\\", "/").endsWith("chat-ui/src/cn.ts"))
        return path.join(here, "src/shims/tailwind-merge.ts");
      return null;
    },
  };
}

/** Tailwind (for the shadow root's stylesheet) and the shims. */
export const embedPlugins = () => [tailwindcss(), embedShims()];
