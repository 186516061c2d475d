import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    // Installs Debian's chromium when it is missing (about a minute, once per machine).
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
