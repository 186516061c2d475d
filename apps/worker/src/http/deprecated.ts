import { AppError } from "@parley/shared";
import type { Context } from "hono";

/**
 * A deprecated form of a route that still answers until its end (RFC 9745 `Deprecation`, RFC 8594
 * `Sunset`, and a `Link` to the form to use), then answers 410 `gone` for good, whatever it is
 * sent: a client learns which form to move to from either answer. `now` is injectable for tests.
 */
export function deprecatedForm(
  c: Context,
  form: { deprecatedAt: string; endsAt: number; successor: string },
  now = Date.now(),
): void {
  c.header("deprecation", `@${Math.floor(Date.parse(form.deprecatedAt) / 1000)}`);
  c.header("sunset", new Date(form.endsAt).toUTCString());
  c.header("link", `<${form.successor}>; rel="successor-version"`);
  if (now >= form.endsAt) {
    throw new AppError(
      "gone",
      `This form of the route ended on ${new Date(form.endsAt - 1).toISOString().slice(0, 10)}: use ${form.successor}`,
    );
  }
}
