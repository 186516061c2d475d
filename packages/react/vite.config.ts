import { embedPlugins } from "@parley/embed/build";
import { defineConfig } from "vite";

const external = ["react", "react-dom", "react-dom/client", "react/jsx-runtime"];

/**
 * dist/index.js for npm hosts: everything bundled (the chat package, the SDKs, the compiled
 * stylesheet as a string) except the host's React. The panel and the markdown renderer stay lazy
 * chunks beside it.
 */
export default defineConfig({
  plugins: embedPlugins(),
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    lib: { entry: "src/index.tsx", formats: ["es"], fileName: () => "index.js" },
    rolldownOptions: {
      external,
      output: { chunkFileNames: "chunks/[name]-[hash].js" },
    },
  },
});
