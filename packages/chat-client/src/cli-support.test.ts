import { describe, expect, it } from "vitest";
import {
  agentUrlFor,
  CliUsageError,
  describeError,
  formatMetadata,
  formatUsd,
  parseCliArgs,
  tokenExpiresAt,
} from "./cli-support.ts";

describe("parseCliArgs", () => {
  it("reads flags over the environment, and skips the `--` pnpm forwards", () => {
    const options = parseCliArgs(["--", "--project", "prj_1", "--email", "a@b.c"], {
      PARLEY_EMAIL: "env@b.c",
      PARLEY_PASSWORD: "secret",
      PARLEY_URL: "http://localhost:9000/",
    });
    expect(options).toMatchObject({
      url: "http://localhost:9000",
      email: "a@b.c",
      password: "secret",
      project: "prj_1",
      history: 10,
    });
    expect(agentUrlFor(options)).toBe("http://localhost:9000/agents/onboarding-agent/prj_1");
    expect(agentUrlFor(parseCliArgs(["--session", "ses_2"]))).toBe(
      "http://127.0.0.1:8787/agents/assistant-agent/ses_2",
    );
    expect(agentUrlFor(parseCliArgs([]))).toBeUndefined();
  });

  it("refuses two targets, unknown flags and a bad --history", () => {
    expect(() => parseCliArgs(["--project", "a", "--session", "b"])).toThrow(CliUsageError);
    expect(() => parseCliArgs(["--nope"])).toThrow(CliUsageError);
    expect(() => parseCliArgs(["--history", "-1"])).toThrow(CliUsageError);
  });
});

describe("output helpers", () => {
  it("formats metadata beyond a normal finish", () => {
    expect(formatMetadata(undefined)).toBeUndefined();
    expect(formatMetadata({ finishReason: "stop" })).toBeUndefined();
    expect(
      formatMetadata({ finishReason: "stop", code: "preview_exhausted", costMicros: 120 }),
    ).toBe("code: preview_exhausted · costMicros: 120");
    expect(formatMetadata({ finishReason: "length" })).toBe("finishReason: length");
  });

  it("names the reply's profile and model in words, not as JSON", () => {
    const builtIn = formatMetadata({
      profile: { id: null, version: 0 },
      model: { id: "parley/dev", name: "Dev" },
    });
    expect(builtIn).toBe("profile: built-in · model: Dev (parley/dev)");
    const tenant = formatMetadata({
      profile: { id: "prof_1", version: 3, name: "Ledgy" },
      model: { id: "parley/dev-fast", name: "parley/dev-fast" },
    });
    expect(tenant).toBe("profile: Ledgy v3 · model: parley/dev-fast");
    expect(formatMetadata({ profile: { id: "prof_2", version: 1 } })).toBe("profile: prof_2 v1");
    expect(`${builtIn}${tenant}`).not.toContain("{");
  });

  it("prints a reply's cost and tokens as a person reads them, not as JSON", () => {
    const line = formatMetadata({
      turnId: "turn-1",
      finish: "completed",
      tokens: {
        promptTokens: 1_000,
        completionTokens: 234,
        cachedPromptTokens: 0,
        reasoningTokens: 0,
      },
      priceMicros: 1_200,
      steps: 1,
      finishReason: "stop",
    });
    expect(line).toBe("cost $0.0012 · 1,234 tokens");
    expect(
      formatMetadata({ finish: "failed", code: "model_error", priceMicros: 0, tokens: {} }),
    ).toBe("failed · cost $0.00 · 0 tokens · code: model_error");
    expect(formatMetadata({ turnId: "turn-2", freeTurnsLeft: 3, finish: "completed" })).toBe(
      "3 free turns left",
    );
    expect(formatUsd(1_234_500_000)).toBe("$1,234.50");
  });

  it("describes platform errors and reads a JWT's expiry", () => {
    expect(describeError(404, { error: { code: "not_found", message: "No such project." } })).toBe(
      "404 not_found: No such project.",
    );
    expect(describeError(400, "Invalid request")).toBe("400 Invalid request");
    const payload = Buffer.from(JSON.stringify({ exp: 1_900_000_000 })).toString("base64url");
    expect(tokenExpiresAt(`h.${payload}.s`)).toBe(1_900_000_000_000);
    expect(tokenExpiresAt("opaque")).toBeUndefined();
  });
});
