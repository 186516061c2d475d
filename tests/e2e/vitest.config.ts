import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    environment: "node",
    include: ["test/**/*.test.ts"],
    // Installs Debian's chromium when it is missing (about a minute, once per machine).
    globalSetup: ["test/global-setup.ts"],
    // Each file starts the whole platform; one at a time keeps the machine's memory in bounds.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 180_000,
  },
});
