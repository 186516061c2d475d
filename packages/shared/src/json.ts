/**
 * Guards for JSON that comes from outside (request bodies, chat frames, project memory, tool input).
 * `JSON.parse` itself copes with any nesting, but what runs on the value afterwards is often
 * recursive (zod's `z.json()`, `JSON.stringify`) and overflows the stack a few thousand levels down:
 * a 500 instead of a 400. Both guards here loop over an explicit stack, so they are safe on any input.
 */

/** Deepest nesting of arrays and objects accepted in any JSON a client sends. */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether JSON text nests arrays and objects deeper than `maxDepth`, found by scanning the text
 * (brackets inside strings do not count). Cheaper than parsing, so it can run before `JSON.parse`;
 * whether the text is valid JSON is left to the parser.
 */
export function jsonTextTooDeep(text: string, maxDepth: number = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c)
        i++; // a backslash escapes the next character, a quote included
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return false;
}

/** What is wrong with a parsed JSON value, and where (a zod-style path from the value's root). */
export interface JsonProblem {
  path: (string | number)[];
  message: string;
}

/**
 * The first problem of a parsed JSON value: arrays and objects nested deeper than `maxDepth`, or a
 * `__proto__` key anywhere. `JSON.parse` makes `__proto__` an ordinary own key, but zod records,
 * `Object.assign` and plain assignment treat it as the prototype, so the key would vanish without a
 * word (or change what the object inherits). A `constructor` object holding a `prototype` key is
 * refused too: it is the other prototype-pollution path, and the AI SDK's parsers (tool input, the
 * web app's stream) throw on both, so such a value could not travel through a chat. `constructor`
 * and `prototype` on their own are plain keys and pass.
 */
export function jsonValueProblem(
  value: unknown,
  maxDepth: number = MAX_JSON_DEPTH,
): JsonProblem | null {
  const stack: { node: unknown; path: (string | number)[] }[] = [{ node: value, path: [] }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { node, path } = next;
    if (typeof node !== "object" || node === null) continue;
    if (path.length >= maxDepth) {
      // The top-level field is enough to find it; the whole path would be `maxDepth` long.
      return {
        path: path.slice(0, 1),
        message: `must not nest arrays and objects more than ${maxDepth} levels deep`,
      };
    }
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push({ node: node[i], path: [...path, i] });
      continue;
    }
    const keys = Object.keys(node);
    if (keys.includes("__proto__")) {
      return { path: [...path, "__proto__"], message: "__proto__ is not allowed as a key" };
    }
    const ctor = (node as Record<string, unknown>).constructor;
    if (keys.includes("constructor") && typeof ctor === "object" && ctor !== null) {
      if (Object.hasOwn(ctor, "prototype")) {
        return {
          path: [...path, "constructor", "prototype"],
          message: "constructor.prototype is not allowed as a key path",
        };
      }
    }
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      stack.push({ node: (node as Record<string, unknown>)[key], path: [...path, key] });
    }
  }
  return null;
}
