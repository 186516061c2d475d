import { embedPlugins } from "@parley/embed/build";
import { defineConfig } from "vitest/config";

// The host's React, as an app using @parley/react has it (no Preact here).
export default defineConfig({
  plugins: embedPlugins(),
  test: {
    environment: "happy-dom",
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
