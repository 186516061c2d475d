import { describe, expect, it } from "vitest";
import { dollarsInput, formatMicros, parseDollars, parseDollarsToMicros } from "./format.ts";

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

  it("keeps four significant digits under a dollar, so crossing a cent changes no precision", () => {
    // The outside probe's session spend: $0.007546, then $0.02 for $0.0154 (a third off).
    expect(formatMicros(7_546)).toBe("$0.007546");
    expect(formatMicros(15_432)).toBe("$0.01543");
    expect(formatMicros(12_345)).toBe("$0.01235");
    expect(formatMicros(15_000)).toBe("$0.015");
    expect(formatMicros(10_000)).toBe("$0.01");
    expect(formatMicros(500_000)).toBe("$0.50");
    expect(formatMicros(123_456)).toBe("$0.1235");
    expect(formatMicros(999_960)).toBe("$1.00");
    expect(formatMicros(-500)).toBe("-$0.0005");
    expect(formatMicros(-15_432)).toBe("-$0.01543");
  });

  it("never shows an amount more than 0.05% off under a dollar, nor half a cent off above", () => {
    const parse = (text: string) => Math.round(Number(text.replace(/[$,]/g, "")) * 1_000_000);
    for (let micros = 1; micros < 5_000_000; micros = Math.ceil(micros * 1.37) + 7) {
      const shown = parse(formatMicros(micros));
      const allowed = micros < 1_000_000 ? micros * 0.0005 : 5_000;
      expect(Math.abs(shown - micros), `${micros} -> ${formatMicros(micros)}`).toBeLessThanOrEqual(
        allowed,
      );
    }
  });

  it("rounds to the nearest cent from a dollar on, and shows negatives", () => {
    expect(formatMicros(1_004_999)).toBe("$1.00");
    expect(formatMicros(1_005_000)).toBe("$1.01");
    expect(formatMicros(-2_500_000)).toBe("-$2.50");
  });

  it("rounds a balance down with floor, so it never reads more than there is", () => {
    expect(formatMicros(4_997_065, { floor: true })).toBe("$4.99");
    expect(formatMicros(4_997_065)).toBe("$5.00");
    expect(formatMicros(5_000_000, { floor: true })).toBe("$5.00");
    expect(formatMicros(19_999, { floor: true })).toBe("$0.01999");
    expect(formatMicros(123_456, { floor: true })).toBe("$0.1234");
    expect(formatMicros(999_999, { floor: true })).toBe("$0.9999");
    expect(formatMicros(-2_503_000, { floor: true })).toBe("-$2.51");
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

describe("dollarsInput", () => {
  it("writes an amount as a person types it, exactly, and parseDollars reads it back", () => {
    expect(dollarsInput(null)).toBe("");
    expect(dollarsInput(50_000_000)).toBe("50");
    expect(dollarsInput(12_500_000)).toBe("12.50");
    expect(dollarsInput(70_000)).toBe("0.07");
    expect(dollarsInput(5_000)).toBe("0.005");
    expect(dollarsInput(1_234_500)).toBe("1.2345");
    expect(dollarsInput(1_250_000_000_001)).toBe("1250000.000001");
    for (const micros of [1, 5_000, 70_000, 1_234_500, 12_500_000, 1_250_000_000_001]) {
      expect(parseDollarsToMicros(dollarsInput(micros))).toBe(micros);
    }
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
