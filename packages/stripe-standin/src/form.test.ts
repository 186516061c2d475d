import { describe, expect, it } from "vitest";
import { StripeApiError } from "./errors.ts";
import {
  applyMetadataUpdate,
  canonicalParams,
  decodeForm,
  metadataParam,
  metadataUpdateParam,
  unsettableString,
} from "./form.ts";

describe("decodeForm", () => {
  it("decodes the stripe client's bracket notation into nested objects and arrays", () => {
    const body =
      "mode=payment&line_items[0][price_data][currency]=usd&line_items[0][price_data][unit_amount]=500" +
      "&line_items[0][price_data][product_data][name]=Parley%20credits&line_items[0][quantity]=2" +
      "&line_items[1][quantity]=1&metadata[org_id]=org_1&expand[0]=payment_intent";
    expect(decodeForm(body)).toEqual({
      mode: "payment",
      line_items: [
        {
          price_data: {
            currency: "usd",
            unit_amount: "500",
            product_data: { name: "Parley credits" },
          },
          quantity: "2",
        },
        { quantity: "1" },
      ],
      metadata: { org_id: "org_1" },
      expand: ["payment_intent"],
    });
  });

  it("accepts what browsers and curl send: encoded brackets, + for spaces, a[]", () => {
    expect(decodeForm("expand%5B%5D=a&expand[]=b&name=two+words")).toEqual({
      expand: ["a", "b"],
      name: "two words",
    });
  });

  it("orders array items by index, and keeps an empty value (the client's null)", () => {
    expect(decodeForm("a[1]=y&a[0]=x&metadata[gone]=")).toEqual({
      a: ["x", "y"],
      metadata: { gone: "" },
    });
  });

  it("refuses a key sent both as a value and a hash, and prototype keys", () => {
    expect(() => decodeForm("a=1&a[b]=2")).toThrow(StripeApiError);
    expect(() => decodeForm("a[b]=2&a=1")).toThrow(StripeApiError);
    expect(() => decodeForm("__proto__[x]=1")).toThrow(StripeApiError);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe("metadataParam", () => {
  it("drops empty values and enforces Stripe's limits", () => {
    expect(metadataParam({ metadata: { a: "1", b: "" } }, "metadata")).toEqual({ a: "1" });
    expect(metadataParam({ metadata: "" }, "metadata")).toEqual({});
    expect(() => metadataParam({ metadata: { ["k".repeat(41)]: "v" } }, "metadata")).toThrow(
      /up to 40 characters/,
    );
    expect(() => metadataParam({ metadata: { k: "v".repeat(501) } }, "metadata")).toThrow(
      /up to 500 characters/,
    );
  });
});

describe("updates", () => {
  it("reads an empty value as unset: a field, one metadata key, or all metadata", () => {
    expect(unsettableString({ email: "" }, "email")).toBeNull();
    expect(unsettableString({ email: "a@example.com" }, "email")).toBe("a@example.com");
    expect(unsettableString({}, "email")).toBeUndefined();
    expect(() => unsettableString({ email: { a: "1" } }, "email")).toThrow(/Invalid string/);

    expect(metadataUpdateParam({}, "metadata")).toBeUndefined();
    expect(metadataUpdateParam({ metadata: "" }, "metadata")).toBeNull();
    expect(metadataUpdateParam({ metadata: { a: "1", b: "" } }, "metadata")).toEqual({
      a: "1",
      b: null,
    });
    expect(() => metadataUpdateParam({ metadata: { k: "v".repeat(501) } }, "metadata")).toThrow(
      /up to 500 characters/,
    );
  });

  it("merges metadata into the current keys, and holds the 50-key limit on the result", () => {
    const current = { a: "1", b: "2" };
    expect(applyMetadataUpdate(current, { b: null, c: "3" })).toEqual({ a: "1", c: "3" });
    expect(applyMetadataUpdate(current, null)).toEqual({});
    expect(current).toEqual({ a: "1", b: "2" });
    const full = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, "v"]));
    expect(Object.keys(applyMetadataUpdate(full, { k0: null, x: "1" }))).toHaveLength(50);
    expect(() => applyMetadataUpdate(full, { x: "1" })).toThrow(/up to 50 metadata keys/);
  });
});

describe("canonicalParams", () => {
  it("ignores key order but not values or array order", () => {
    expect(canonicalParams({ a: "1", b: { c: "2", d: "3" } })).toBe(
      canonicalParams({ b: { d: "3", c: "2" }, a: "1" }),
    );
    expect(canonicalParams({ a: ["1", "2"] })).not.toBe(canonicalParams({ a: ["2", "1"] }));
    expect(canonicalParams({ a: "1" })).not.toBe(canonicalParams({ a: "2" }));
  });
});
