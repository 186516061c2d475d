/**
 * Adapts the compiled stylesheet to a shadow root on someone else's page, once per page:
 *
 * - `@property` rules do nothing inside a shadow root (they register globally, from documents
 *   only), so Tailwind's `--tw-*` variables would start with no value and rings, shadows and
 *   transforms would break. Each becomes a plain declaration of its initial value on every
 *   element, as Tailwind's own fallback for browsers without `@property` does, in the same
 *   cascade layer as that fallback (the first), so the utilities still set them.
 * - `rem` is relative to the host page's root font size, which the page chooses (62.5% is
 *   common): the assistant would shrink or grow with it. Every rem in a value becomes px at 16px
 *   per rem (not in a selector, which must keep naming its class).
 */
export function shadowCss(css: string): string {
  const initial: string[] = [];
  const withoutProperties = css.replace(
    /@property\s+(--[\w-]+)\s*\{([^}]*)\}/g,
    (_rule, name: string, body: string) => {
      const value = /initial-value\s*:\s*([^;]+)/.exec(body)?.[1]?.trim();
      // A registered <length> of `0` is 0px; unregistered it is the number 0, and a calc() that
      // adds it to a length is invalid (a ring's `calc(2px + var(--tw-ring-offset-width))`).
      const length = /syntax\s*:\s*["']<length/.test(body);
      if (value !== undefined) initial.push(`${name}:${length && value === "0" ? "0px" : value}`);
      return "";
    },
  );
  // Not inside a selector: an arbitrary value's class names its rem (`h-[min(...,40rem)]`,
  // escaped as `\,40rem\)`), and a rewritten selector no longer matches its class.
  const px = withoutProperties.replace(
    /(^|(?<!\\)[^\w.\\-])(-?\d*\.?\d+)rem\b/g,
    (_match, before: string, number: string) => `${before}${+(Number(number) * 16).toFixed(4)}px`,
  );
  // In Tailwind's first layer (`properties`), under the utilities: unlayered, these initial values
  // beat every utility that sets a `--tw-*` variable (a layer never beats unlayered rules), and
  // focus rings, translates and shadows had no effect in the assistant.
  return initial.length === 0
    ? px
    : `${px}\n@layer properties{:host,*,::before,::after,::backdrop{${initial.join(";")}}}`;
}

let sheet: CSSStyleSheet | null = null;
let text: string | null = null;

/**
 * Puts the stylesheet into a shadow root: one constructed sheet shared by every assistant on the
 * page where the browser can (a page whose CSP forbids inline styles does not block it), else a
 * `<style>` element.
 */
export function adoptStyles(root: ShadowRoot, css: string): void {
  text ??= shadowCss(css);
  if ("adoptedStyleSheets" in root && typeof CSSStyleSheet === "function") {
    try {
      if (!sheet) {
        sheet = new CSSStyleSheet();
        sheet.replaceSync(text);
      }
      if (!root.adoptedStyleSheets.includes(sheet)) {
        root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
      }
      return;
    } catch {
      sheet = null; // constructable sheets not supported after all: fall through to <style>
    }
  }
  if (root.querySelector("style[data-parley]")) return;
  const style = document.createElement("style");
  style.dataset.parley = "";
  style.textContent = text;
  root.prepend(style);
}
