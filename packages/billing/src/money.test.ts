import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  addMicros,
  assertMicros,
  centsToMicros,
  decimalToAttos,
  dollarsToMicrosCeil,
  formatMicros,
  microsToCents,
  subtractMicros,
  sumDollarsToMicrosCeil,
} from "./money.ts";

describe("safe-integer helpers", () => {
  it("refuse fractions, NaN, infinities and unsafe integers", () => {
    expect(assertMicros(5)).toBe(5);
    for (const bad of [0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      expect(() => assertMicros(bad)).toThrow(RangeError);
    }
  });

  it("add and subtract exactly, refusing overflow", () => {
    expect(addMicros(1, 2, -4)).toBe(-1);
    expect(subtractMicros(10, 25)).toBe(-15);
    expect(() => addMicros(Number.MAX_SAFE_INTEGER, 1)).toThrow(RangeError);
    expect(() => subtractMicros(-Number.MAX_SAFE_INTEGER, 1)).toThrow(RangeError);
  });

  it("convert cents and format dollars", () => {
    expect(centsToMicros(1234)).toBe(12_340_000);
    expect(() => centsToMicros(1.5)).toThrow(RangeError);
    expect(microsToCents(12_340_000)).toBe(1234);
    expect(microsToCents(12_340_001)).toBeNull();
    expect(formatMicros(1_234_567)).toBe("1.234567");
    expect(formatMicros(-5)).toBe("-0.000005");
    expect(formatMicros(0)).toBe("0.000000");
  });
});

describe("decimalToAttos", () => {
  it("parses plain and exponent notation exactly", () => {
    expect(decimalToAttos("0.000123")).toBe(123_000_000_000_000n);
    expect(decimalToAttos("1.23e-7")).toBe(123_000_000_000n);
    expect(decimalToAttos("2")).toBe(2_000_000_000_000_000_000n);
    expect(decimalToAttos("1e+2")).toBe(100_000_000_000_000_000_000n);
    // 19th decimal rounds half up
    expect(decimalToAttos("0.0000000000000000015")).toBe(2n);
    expect(decimalToAttos("0.0000000000000000014")).toBe(1n);
  });

  it("refuses what is not a non-negative decimal", () => {
    for (const bad of ["-1", "abc", "", "1.2.3", "NaN"]) {
      expect(() => decimalToAttos(bad)).toThrow(RangeError);
    }
  });
});

describe("dollarsToMicrosCeil", () => {
  it("is not fooled by binary float noise", () => {
    // The naive method overcharges: 0.000123 * 1e6 is 123.00000000000001.
    expect(Math.ceil(0.000123 * 1e6)).toBe(124);
    expect(dollarsToMicrosCeil(0.000123)).toBe(123);
    expect(dollarsToMicrosCeil(0.1 + 0.2)).toBe(300_000);
    expect(dollarsToMicrosCeil(0.3 - 0.1)).toBe(200_000);
    expect(dollarsToMicrosCeil(1.1 * 3)).toBe(3_300_000);
  });

  it("rounds real sub-micro fractions up", () => {
    expect(dollarsToMicrosCeil(0)).toBe(0);
    expect(dollarsToMicrosCeil(1e-7)).toBe(1);
    expect(dollarsToMicrosCeil(0.0000015)).toBe(2);
    expect(dollarsToMicrosCeil(0.0000010011)).toBe(2);
    expect(dollarsToMicrosCeil(0.001234567)).toBe(1235);
    expect(dollarsToMicrosCeil(12.5)).toBe(12_500_000);
  });

  it("treats less than half a nano-dollar above a micro as noise", () => {
    expect(dollarsToMicrosCeil(0.0000010004)).toBe(1);
    expect(dollarsToMicrosCeil(0.0000010005)).toBe(2);
    expect(dollarsToMicrosCeil(1e-13)).toBe(0);
  });

  it("refuses negative, non-finite and huge costs", () => {
    for (const bad of [-0.01, Number.NaN, Number.POSITIVE_INFINITY, 1e12]) {
      expect(() => dollarsToMicrosCeil(bad)).toThrow(RangeError);
    }
  });

  it("never undercharges a 6-decimal cost and never overcharges it by a micro", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000_000 }), (micros) => {
        // A provider cost written with at most six decimals converts to exactly its micros.
        expect(dollarsToMicrosCeil(Number(formatMicros(micros)))).toBe(micros);
      }),
      { numRuns: 2000 },
    );
  });

  it("is within one micro above any decimal cost with up to 9 decimals", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1_000_000_000_000 }), (nanos) => {
        const dollars = Number(
          `${Math.floor(nanos / 1e9)}.${String(nanos % 1e9).padStart(9, "0")}`,
        );
        const micros = dollarsToMicrosCeil(dollars);
        // micros*1000 ≥ nanos > (micros-1)*1000
        expect(micros * 1000).toBeGreaterThanOrEqual(nanos);
        expect((micros - 1) * 1000).toBeLessThan(nanos);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("sumDollarsToMicrosCeil", () => {
  it("sums step costs in decimal and rounds once", () => {
    // Per step, each 0.0000001 would round up to 1 micro: 3 micros for 0.3 micros of cost.
    expect(sumDollarsToMicrosCeil([0.0000001, 0.0000001, 0.0000001])).toBe(1);
    expect(sumDollarsToMicrosCeil([0.1, 0.2])).toBe(300_000);
    expect(sumDollarsToMicrosCeil([0.000123, 0.000877])).toBe(1000);
    expect(sumDollarsToMicrosCeil([])).toBe(0);
    expect(() => sumDollarsToMicrosCeil([0.1, -0.1])).toThrow(RangeError);
  });
});
