import { describe, expect, it } from "vitest";
import { formatMicros, parseDollarsToMicros } from "./format.ts";

describe("formatMicros", () => {
  it("formats whole amounts as dollars and cents", () => {
    expect(formatMicros(20_000_000)).toBe("$20.00");
    expect(formatMicros(5_000_000)).toBe("$5.00");
    expect(formatMicros(1_234_567_890_000)).toBe("$1,234,567.89");
    expect(formatMicros(0)).toBe("$0.00");
  });

  it("keeps sub-cent amounts visible instead of $0.00", () => {
    expect(formatMicros(1)).toBe("$0.000001");
    expect(formatMicros(1_230)).toBe("$0.00123");
    expect(formatMicros(9_999)).toBe("$0.009999");
  });

  it("rounds to the nearest cent above a cent, and shows negatives", () => {
    expect(formatMicros(12_345)).toBe("$0.01");
    expect(formatMicros(15_000)).toBe("$0.02");
    expect(formatMicros(-2_500_000)).toBe("-$2.50");
    expect(formatMicros(-500)).toBe("-$0.0005");
  });

  it("refuses non-integers rather than printing a float", () => {
    expect(formatMicros(1.5)).toBe("—");
  });
});

describe("parseDollarsToMicros", () => {
  it("parses dollars and cents into integer micros", () => {
    expect(parseDollarsToMicros("20")).toBe(20_000_000);
    expect(parseDollarsToMicros("$20.5")).toBe(20_500_000);
    expect(parseDollarsToMicros(" 0.07 ")).toBe(70_000);
  });

  it("rejects fractions of a cent and junk", () => {
    expect(parseDollarsToMicros("1.005")).toBeNull();
    expect(parseDollarsToMicros("abc")).toBeNull();
    expect(parseDollarsToMicros("-5")).toBeNull();
    expect(parseDollarsToMicros("")).toBeNull();
  });
});
