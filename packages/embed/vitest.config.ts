import { defineConfig } from "vitest/config";
import { embedPlugins, preactAliases } from "./build.mjs";

// The tests run what the script tag ships: Preact in React's place, the same shims.
export default defineConfig({
  plugins: embedPlugins(),
  resolve: { alias: preactAliases },
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
    // Through Vite, not Node: these import "react", which must become Preact here as in the build.
    server: {
      deps: {
        inline: [/use-stick-to-bottom/, /lucide-react/],
      },
    },
  },
});
