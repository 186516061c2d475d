import { defineConfig } from "vitest/config";
import { embedPlugins, preactAliases } from "./build.mjs";

// The tests run what the script tag ships: Preact in React's place, the same shims.
export default defineConfig({
  plugins: embedPlugins(),
  resolve: { alias: preactAliases },
  test: {
    environment: "happy-dom",
    // CI runs every package's tests at once on two cores: a DOM test that renders a whole screen
    // took 9.9 s there (5 s is vitest's default). Time is never what these tests assert.
    testTimeout: 20_000,
    include: ["src/**/*.test.{ts,tsx}"],
    // Through Vite, not Node: these import "react", which must become Preact here as in the build.
    server: {
      deps: {
        inline: [/use-stick-to-bottom/, /lucide-react/],
      },
    },
  },
});
