import { describe, expect, it } from "vitest";
import { shadowCss } from "./shadow-css.ts";

describe("shadowCss", () => {
  it("turns @property rules into initial values on every element of the shadow tree", () => {
    const css = `@property --tw-ring-shadow { syntax: "*"; inherits: false; initial-value: 0 0 #0000; }
@property --tw-shadow-color { syntax: "*"; inherits: false }
.ring { box-shadow: var(--tw-ring-shadow); }`;
    const out = shadowCss(css);
    expect(out).not.toContain("@property");
    expect(out).toContain(".ring { box-shadow: var(--tw-ring-shadow); }");
    // In the first cascade layer: a utility (layered) must still set the variable; an unlayered
    // rule would win over every layer and the assistant's focus rings would never show.
    expect(out).toContain(
      "@layer properties{:host,*,::before,::after,::backdrop{--tw-ring-shadow:0 0 #0000}}",
    );
  });

  it("gives a length's zero its unit, so a ring's calc() with it stays valid", () => {
    const out = shadowCss(
      `@property --tw-ring-offset-width { syntax: "<length>"; inherits: false; initial-value: 0; }
@property --tw-scale-x { syntax: "*"; inherits: false; initial-value: 1; }`,
    );
    expect(out).toContain("--tw-ring-offset-width:0px;--tw-scale-x:1");
  });

  it("writes rem as px, so the host page's root font size does not scale the assistant", () => {
    expect(
      shadowCss(".p{padding:.25rem;margin:-1.5rem;width:calc(var(--spacing)*4);gap:2rem}"),
    ).toBe(".p{padding:4px;margin:-24px;width:calc(var(--spacing)*4);gap:32px}");
    // Not inside names: a class or variable that merely ends in "rem" stays.
    expect(shadowCss(".lorem{--x-2rem:1}")).toBe(".lorem{--x-2rem:1}");
    // Nor in an arbitrary value's class: the selector must still match the class the panel has
    // (it did not: the launcher's panel lost its width and height).
    expect(
      shadowCss(
        ".h-\\[min\\(var\\(--h\\,40rem\\)\\,calc\\(100dvh-7rem\\)\\)\\]{height:min(var(--h,40rem),calc(100dvh - 7rem))}",
      ),
    ).toBe(
      ".h-\\[min\\(var\\(--h\\,40rem\\)\\,calc\\(100dvh-7rem\\)\\)\\]{height:min(var(--h,640px),calc(100dvh - 112px))}",
    );
  });
});
