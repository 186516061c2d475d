import { describe, expect, it } from "vitest";
import { DEV, FAST, LARGE } from "./fixtures.ts";
import { capabilityWords, inOut, perMTok, refusalWords, tokensShort } from "./model-words.ts";

describe("model words", () => {
  it("writes prices per million tokens exactly, in dollars", () => {
    expect(perMTok(180_000)).toBe("$0.18");
    expect(perMTok(3_600_000)).toBe("$3.60");
    expect(perMTok(30_000)).toBe("$0.03");
    expect(perMTok(1)).toBe("$0.000001");
    expect(perMTok(125)).toBe("$0.000125");
    expect(inOut(FAST)).toBe("$0.12 in · $0.48 out");
  });

  it("writes context windows and capabilities at a glance", () => {
    expect(tokensShort(128_000)).toBe("128K");
    expect(tokensShort(1_047_576)).toBe("1M");
    expect(tokensShort(32_768)).toBe("32.8K");
    expect(capabilityWords(LARGE)).toBe("Tools, reasoning");
    expect(capabilityWords({ capabilities: { tools: false, reasoning: false } })).toBe("Text only");
  });

  it("words a refusal without its field path and with display names, whole ids only", () => {
    const models = [DEV, FAST, LARGE];
    expect(refusalWords("models: parley/dev-large is the model of a profile", models)).toBe(
      "Parley Dev Large is the model of a profile",
    );
    expect(refusalWords("model: parley/dev is not allowed.", models)).toBe(
      "Parley Dev Model is not allowed.",
    );
    expect(refusalWords("models: parley/dev, parley/dev-fast are in use", models)).toBe(
      "Parley Dev Model, Parley Dev Fast are in use",
    );
    expect(refusalWords("model: acme/unknown is not a model", models)).toBe(
      "Acme/unknown is not a model",
    );
  });
});
