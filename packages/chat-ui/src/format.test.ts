import { describe, expect, it } from "vitest";
import { formatMicros, parseDollars, parseDollarsToMicros } from "./format.ts";

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
    expect(formatMicros(4_200)).toBe("$0.0042");
    expect(formatMicros(9_999)).toBe("$0.009999");
  });

  it("rounds to the nearest cent above a cent, and shows negatives", () => {
    expect(formatMicros(12_345)).toBe("$0.01");
    expect(formatMicros(15_000)).toBe("$0.02");
    expect(formatMicros(-2_500_000)).toBe("-$2.50");
    expect(formatMicros(-500)).toBe("-$0.0005");
  });

  it("rounds a balance down with floor, so it never reads more than there is", () => {
    expect(formatMicros(4_997_065, { floor: true })).toBe("$4.99");
    expect(formatMicros(4_997_065)).toBe("$5.00");
    expect(formatMicros(5_000_000, { floor: true })).toBe("$5.00");
    expect(formatMicros(19_999, { floor: true })).toBe("$0.01");
    expect(formatMicros(-2_503_000, { floor: true })).toBe("-$2.51");
    // Below a cent, every micro-dollar shows, floor or not.
    expect(formatMicros(4_200, { floor: true })).toBe("$0.0042");
  });

  it("keeps every micro-dollar when precise, so close balances read differently", () => {
    expect(formatMicros(4_998_765, { precise: true })).toBe("$4.998765");
    expect(formatMicros(4_999_100, { precise: true })).toBe("$4.9991");
    expect(formatMicros(5_000_000, { precise: true })).toBe("$5.00");
    expect(formatMicros(1_234_567_890_001, { precise: true })).toBe("$1,234,567.890001");
    expect(formatMicros(-4_200, { precise: true })).toBe("-$0.0042");
    expect(formatMicros(0, { precise: true })).toBe("$0.00");
  });

  it("refuses non-integers rather than printing a float", () => {
    expect(formatMicros(1.5)).toBe("—");
    expect(formatMicros(1.5, { precise: true })).toBe("—");
  });
});

describe("parseDollars", () => {
  it("parses dollars and cents into integer micros", () => {
    expect(parseDollarsToMicros("20")).toBe(20_000_000);
    expect(parseDollarsToMicros("$20.5")).toBe(20_500_000);
    expect(parseDollarsToMicros(" 0.07 ")).toBe(70_000);
    expect(parseDollarsToMicros("1,250.50")).toBe(1_250_500_000);
  });

  it("takes fractions of a cent down to the micro-dollar (a limit of 0.005)", () => {
    expect(parseDollarsToMicros("0.005")).toBe(5_000);
    expect(parseDollarsToMicros("1.005")).toBe(1_005_000);
    expect(parseDollarsToMicros("0.000001")).toBe(1);
  });

  it("says why an amount is refused: empty, junk, or finer than a micro-dollar", () => {
    expect(parseDollars("")).toEqual({ ok: false, error: "empty" });
    expect(parseDollars("0.0000001")).toEqual({ ok: false, error: "precision" });
    for (const junk of ["abc", "-5", "1.", "1,00", "12e3", "$"]) {
      expect(parseDollars(junk)).toEqual({ ok: false, error: "format" });
    }
  });
});
