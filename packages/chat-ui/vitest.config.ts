import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [react()],
  test: {
    environment: "happy-dom",
    // CI runs every package's tests at once on two cores: a DOM test that renders a whole screen
    // took 9.9 s there (5 s is vitest's default). Time is never what these tests assert.
    testTimeout: 20_000,
    include: ["src/**/*.test.{ts,tsx}"],
  },
});
