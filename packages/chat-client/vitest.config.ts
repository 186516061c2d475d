import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    environment: "node",
    globalSetup: ["test/global-setup.ts"],
    // The fixture worker runs under `wrangler dev`, which bundles and boots workerd on start.
    hookTimeout: 60_000,
    testTimeout: 20_000,
  },
});
