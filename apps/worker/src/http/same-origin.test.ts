import { describe, expect, it } from "vitest";
import { fromAllowedOrigin } from "./same-origin.ts";

const request = (headers: Record<string, string>) =>
  new Request("https://api.parley.test/api/auth/refresh", { method: "POST", headers });

describe("fromAllowedOrigin", () => {
  it("allows the request's own origin, and a client that is not a browser", () => {
    expect(fromAllowedOrigin(request({}), null)).toBe(true);
    expect(fromAllowedOrigin(request({ origin: "https://api.parley.test" }), null)).toBe(true);
    expect(
      fromAllowedOrigin(
        request({ origin: "https://api.parley.test", "sec-fetch-site": "same-origin" }),
        null,
      ),
    ).toBe(true);
    expect(fromAllowedOrigin(request({ "sec-fetch-site": "none" }), null)).toBe(true);
  });

  it("refuses another origin, a sibling subdomain, an opaque origin and cross-site metadata", () => {
    for (const origin of [
      "https://evil.test",
      "https://evil.parley.test",
      "http://api.parley.test",
      "https://api.parley.test:8443",
      "null",
    ]) {
      expect(fromAllowedOrigin(request({ origin }), null), origin).toBe(false);
    }
    for (const site of ["cross-site", "same-site"]) {
      expect(fromAllowedOrigin(request({ "sec-fetch-site": site }), null), site).toBe(false);
      // A cross-origin redirect can end at our origin; the metadata still tells.
      expect(
        fromAllowedOrigin(
          request({ origin: "https://api.parley.test", "sec-fetch-site": site }),
          null,
        ),
        site,
      ).toBe(false);
    }
  });

  it("allows PUBLIC_URL's origin, which is another origin by design, and only that one", () => {
    const publicUrl = "https://app.parley.test/welcome";
    expect(
      fromAllowedOrigin(
        request({ origin: "https://app.parley.test", "sec-fetch-site": "same-site" }),
        publicUrl,
      ),
    ).toBe(true);
    expect(fromAllowedOrigin(request({ origin: "https://api.parley.test" }), publicUrl)).toBe(true);
    expect(fromAllowedOrigin(request({ origin: "https://evil.parley.test" }), publicUrl)).toBe(
      false,
    );
    expect(fromAllowedOrigin(request({ "sec-fetch-site": "same-site" }), publicUrl)).toBe(false);
  });
});
