import { defineConfig } from "vite";
import { embedPlugins, preactAliases } from "./build.mjs";

/**
 * The script-tag build: `dist/parley-assistant.js` (an ES module; the panel and the markdown
 * renderer are chunks beside it, fetched relative to it), with Preact in React's place. The web
 * app's build copies dist/ to its own `dist/embed/`, which the Worker serves as static assets.
 */
export default defineConfig({
  plugins: embedPlugins(),
  resolve: { alias: preactAliases },
  define: { "process.env.NODE_ENV": JSON.stringify("production") },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Hosts' browsers: module scripts with dynamic import, and shadow DOM with adopted sheets.
    target: "es2022",
    lib: {
      entry: "src/parley-assistant.ts",
      formats: ["es"],
      fileName: () => "parley-assistant.js",
    },
    rolldownOptions: {
      output: { chunkFileNames: "chunks/[name]-[hash].js" },
    },
  },
});
