import { defineConfig } from "vitest/config";

export default defineConfig({
  // The property tests run hundreds of random interleavings; on a busy 2-core machine that can take
  // several seconds, which is not a failure.
  test: { testTimeout: 60_000 },
});
