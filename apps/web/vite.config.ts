import { cpSync, existsSync } from "node:fs";
import path from "node:path";
import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig, type Plugin } from "vite";

/**
 * The embeddable assistant's script (packages/embed, built before this by turbo: see turbo.json)
 * is served by the Worker beside the app, at /embed/parley-assistant.js; public/_headers gives it
 * CORS, as a module script on a tenant's page is a cross-origin fetch.
 */
function embedAssets(): Plugin {
  const from = path.resolve(import.meta.dirname, "../../packages/embed/dist");
  return {
    name: "parley-embed-assets",
    apply: "build",
    closeBundle() {
      if (!existsSync(from)) {
        this.warn(
          "packages/embed/dist is missing: run `pnpm turbo run build --filter=@parley/web`",
        );
        return;
      }
      cpSync(from, path.resolve(import.meta.dirname, "dist/embed"), { recursive: true });
    },
  };
}

export default defineConfig({
  plugins: [react(), tailwindcss(), embedAssets()],
  // The API reference page (api-reference.html) has a build of its own after this one
  // (vite.api-reference.config.ts), so no chunk is shared with the app shell.
  build: { outDir: "dist", emptyOutDir: true },
  // `vite` alone serves the UI; the API and agents come from `pnpm dev` (wrangler) on :8787.
  server: {
    proxy: {
      "/api": "http://127.0.0.1:8787",
      "/agents": { target: "ws://127.0.0.1:8787", ws: true },
    },
  },
});
