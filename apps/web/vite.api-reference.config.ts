import path from "node:path";
import { defineConfig } from "vite";

/**
 * The interactive API reference (/api-reference, served by the Worker's assets as
 * dist/api-reference.html; docs/2026-12-02-openapi.md), built after the app into the same dist
 * but as a build of its own: as a second entry of the app's build it shared chunks with the app
 * shell (React's JSX runtime was split out of it, +0.3 KB of the shell's 120 KB budget). Alone,
 * the shell's files are exactly what they were without it.
 */
export default defineConfig({
  build: {
    outDir: "dist",
    emptyOutDir: false,
    // Its files apart from the app's (dist/assets/reference/), so `pnpm bench size` counts them apart.
    assetsDir: "assets/reference",
    // Scalar's reference is one large page (about 470 KB gzip), loaded only here.
    chunkSizeWarningLimit: 2_000,
    rolldownOptions: {
      input: { "api-reference": path.resolve(import.meta.dirname, "api-reference.html") },
    },
  },
});
