import tailwindcss from "@tailwindcss/vite";
import react from "@vitejs/plugin-react";
import { defineConfig } from "vite";

export default defineConfig({
  plugins: [react(), tailwindcss()],
  build: { outDir: "dist", emptyOutDir: true },
  // `vite` alone serves the UI; the API and agents come from `pnpm dev` (wrangler) on :8787.
  server: {
    proxy: {
      "/api": "http://127.0.0.1:8787",
      "/agents": { target: "ws://127.0.0.1:8787", ws: true },
    },
  },
});
