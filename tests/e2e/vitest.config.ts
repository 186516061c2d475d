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
    // `expect.poll` gives up after 1 s by default: a browser on a loaded 2-core CI machine can take
    // longer to show a settled spend or a new title, and a poll returns as soon as it holds.
    expect: { poll: { timeout: 15_000, interval: 100 } },
  },
});
