import { describe, expect, it } from "vitest";
import { z } from "zod";
import { usageQuerySchema } from "./billing.ts";
import {
  createOrgSchema,
  createProjectSchema,
  erasureRequestSchema,
  loginSchema,
  MAX_MEMORY_BYTES,
  memoryBytes,
  memorySchema,
  signupSchema,
  titleFrom,
  updateProjectSchema,
} from "./schemas.ts";
import { createSessionSchema } from "./sessions.ts";

describe("schemas", () => {
  it("normalizes emails and refuses unknown fields", () => {
    const parsed = signupSchema.parse({
      email: "  Ada@Example.COM ",
      password: "long enough",
      name: " Ada ",
    });
    expect(parsed).toEqual({ email: "ada@example.com", password: "long enough", name: "Ada" });
    const extra = signupSchema.safeParse({
      email: "a@b.co",
      password: "long enough",
      name: "A",
      role: "owner",
    });
    expect(extra.success).toBe(false);
  });

  it("accepts JSON objects as memory and refuses other shapes", () => {
    expect(
      createProjectSchema.safeParse({ name: "P", memory: { a: [1, { b: null }] } }).success,
    ).toBe(true);
    expect(createProjectSchema.safeParse({ name: "P", memory: [1] }).success).toBe(false);
    expect(createProjectSchema.safeParse({ name: "P", memory: { "": 1 } }).success).toBe(false);
  });

  it("requires something to update", () => {
    expect(updateProjectSchema.safeParse({}).success).toBe(false);
    expect(updateProjectSchema.safeParse({ memory: {} }).success).toBe(true);
  });

  it("measures memory in UTF-8 bytes", () => {
    expect(memoryBytes({ a: "é" })).toBe(JSON.stringify({ a: "é" }).length + 1);
    expect(memoryBytes({ notes: "x".repeat(MAX_MEMORY_BYTES) })).toBeGreaterThan(MAX_MEMORY_BYTES);
  });
});

/** The first issue's message and path, or null when the value is accepted. */
function refusal(schema: z.ZodType, value: unknown) {
  const result = schema.safeParse(value);
  if (result.success) return null;
  const issue = result.error.issues[0];
  return { path: issue?.path.join("."), message: issue?.message };
}

describe("text people type (issue 12)", () => {
  const named = (name: string) => refusal(createOrgSchema, { name });

  it("refuses control characters, line breaks and tabs in one-line names, naming the field", () => {
    for (const bad of [
      "a\u0000b",
      "a\u0007",
      "line\nbreak",
      "tab\there",
      "cr\r",
      "del\u007f",
      "c1\u0085",
      "ls\u2028",
    ]) {
      expect(named(bad), JSON.stringify(bad)).toEqual({
        path: "name",
        message: "must be a single line without control characters (no tabs or line breaks)",
      });
    }
  });

  it("refuses lone surrogates but keeps real astral characters", () => {
    expect(named("bad \ud800 half")?.message).toMatch(/unpaired surrogate/);
    expect(named("bad \udfff")?.message).toMatch(/unpaired surrogate/);
    expect(createOrgSchema.parse({ name: "Rocket 🚀" })).toEqual({ name: "Rocket 🚀" });
  });

  it("refuses bidi embeddings, overrides and isolates", () => {
    for (const mark of [
      "\u202a",
      "\u202b",
      "\u202c",
      "\u202d",
      "\u202e",
      "\u2066",
      "\u2067",
      "\u2068",
      "\u2069",
    ]) {
      expect(named(`invoice${mark}fdp.exe`)?.message, mark).toMatch(/bidirectional control/);
    }
    // Right-to-left text itself is welcome.
    expect(createOrgSchema.parse({ name: "שלום עולם" }).name).toBe("שלום עולם");
  });

  it("refuses text with nothing visible, and empty text after trimming", () => {
    for (const blank of [
      "\u200b",
      "\u200b\u200c\u200d",
      "\u200b \ufeff",
      "\u2060",
      "\u3164",
      "\u00ad",
    ]) {
      expect(named(blank)?.message, JSON.stringify(blank)).toBe("must contain visible characters");
    }
    expect(named("   ")?.path).toBe("name");
    // A zero-width joiner inside visible text (emoji sequences, Indic scripts) is fine.
    expect(createOrgSchema.parse({ name: "👩\u200d💻 team" }).name).toBe("👩\u200d💻 team");
  });

  it("normalizes to NFC and trims, and counts the length after that", () => {
    expect(createOrgSchema.parse({ name: "  Cafe\u0301 " }).name).toBe("Caf\u00e9");
    expect(createOrgSchema.safeParse({ name: "e\u0301".repeat(100) }).success).toBe(true);
    expect(named("x".repeat(101))?.path).toBe("name");
  });

  it("applies to every human-readable field", () => {
    const bad = "x\u202ey";
    expect(
      refusal(signupSchema, { email: "a@b.co", password: "long enough", name: bad })?.path,
    ).toBe("name");
    expect(
      refusal(signupSchema, { email: "a@b.co", password: "long enough", name: "A", orgName: bad })
        ?.path,
    ).toBe("orgName");
    expect(refusal(createProjectSchema, { name: bad })?.path).toBe("name");
    expect(refusal(updateProjectSchema, { name: bad })?.path).toBe("name");
    expect(refusal(createSessionSchema, { title: bad })?.path).toBe("title");
    expect(refusal(memorySchema, { [bad]: 1 })?.message).toMatch(/bidirectional/);
    const subject = { type: "session", id: "ses_x" };
    expect(refusal(erasureRequestSchema, { subject, reason: bad })?.path).toBe("reason");
  });

  it("lets a reason span lines, but not carry other controls", () => {
    const subject = { type: "session", id: "ses_x" };
    expect(erasureRequestSchema.parse({ subject, reason: " line one\r\n\tline two " }).reason).toBe(
      "line one\r\n\tline two",
    );
    expect(refusal(erasureRequestSchema, { subject, reason: "a\u0000b" })).toEqual({
      path: "reason",
      message: "must not contain control characters",
    });
    expect(refusal(erasureRequestSchema, { subject, reason: "a\u2028b" })?.path).toBe("reason");
    expect(refusal(erasureRequestSchema, { subject, reason: "\u200b" })?.message).toBe(
      "must contain visible characters",
    );
    expect(erasureRequestSchema.parse({ subject, reason: "  " }).reason).toBe("");
  });
});

describe("project memory keys and nesting (issue 12)", () => {
  it("refuses __proto__ as a key at the top and nested, as JSON.parse delivers it", () => {
    expect(refusal(memorySchema, JSON.parse('{"__proto__": {"x": 1}}'))).toEqual({
      path: "__proto__",
      message: "__proto__ is not allowed as a key",
    });
    expect(refusal(memorySchema, JSON.parse('{"a": [{"b": {"__proto__": 1}}]}'))?.path).toBe(
      "a.0.b.__proto__",
    );
    expect(
      refusal(createProjectSchema, JSON.parse('{"name": "P", "memory": {"__proto__": 1}}')),
    ).toMatchObject({ path: "memory.__proto__" });
  });

  it("keeps constructor and prototype as ordinary keys (they round-trip), but not together", () => {
    const memory = JSON.parse('{"constructor": {"name": 1}, "prototype": 2, "toString": "x"}');
    const parsed = memorySchema.parse(memory);
    expect(JSON.stringify(parsed)).toBe(JSON.stringify(memory));
    expect(Object.keys(parsed)).toEqual(["constructor", "prototype", "toString"]);
    expect(refusal(memorySchema, JSON.parse('{"constructor": {"prototype": 1}}'))?.path).toBe(
      "constructor.prototype",
    );
  });

  it("refuses nesting deeper than 32 levels before z.json() could overflow the stack", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5_000; i++) deep = [deep];
    expect(refusal(memorySchema, { notes: deep })).toEqual({
      path: "notes",
      message: "must not nest arrays and objects more than 32 levels deep",
    });
    let ok: unknown = 1;
    for (let i = 0; i < 31; i++) ok = { k: ok };
    expect(memorySchema.safeParse({ notes: ok }).success).toBe(true);
  });

  it("normalizes keys to NFC and refuses two keys that become one", () => {
    expect(Object.keys(memorySchema.parse({ "Cafe\u0301": 1 }))).toEqual(["Caf\u00e9"]);
    expect(refusal(memorySchema, { "Caf\u00e9": 1, "Cafe\u0301": 2 })?.message).toMatch(/same key/);
    expect(refusal(memorySchema, { "line\nbreak": 1 })?.message).toMatch(/single line/);
  });

  it("still describes itself to the model as a JSON object", () => {
    const schema = z.toJSONSchema(z.strictObject({ set: memorySchema.optional() }), {
      target: "draft-7",
      io: "input",
    });
    expect(schema.properties?.set).toMatchObject({ type: "object" });
  });
});

describe("usage query instants (issue 12)", () => {
  const at = (from: string) => refusal(usageQuerySchema, { from });

  it("takes dates and ISO timestamps", () => {
    expect(usageQuerySchema.parse({ from: "2026-11-01", to: "2026-12-01" }).from).toBe(
      Date.UTC(2026, 10, 1),
    );
    expect(
      usageQuerySchema.parse({ from: "2026-11-01T10:00:00.123456+01:00", to: "2026-12-01" }).from,
    ).toBe(Date.UTC(2026, 10, 1, 9, 0, 0, 123));
  });

  it("refuses what Date.parse would guess at, and days that do not exist", () => {
    for (const from of [
      "1",
      "yesterday",
      "2026-02-31",
      "2026-13-01",
      "Tue, 01 Dec 2026",
      "2026-11-01T25:00Z",
    ]) {
      expect(at(from), from).toMatchObject({ path: "from" });
    }
  });

  it("refuses six-digit years (the default window at the edge of the Date range was a 500)", () => {
    expect(refusal(usageQuerySchema, { to: "-271821-04-20T00:00:00Z" })).toMatchObject({
      path: "to",
    });
    expect(usageQuerySchema.safeParse({ to: "0000-01-01" }).success).toBe(true);
  });
});

describe("titleFrom", () => {
  it("keeps what is visible, in at most max code points, never half a surrogate pair", () => {
    expect(titleFrom("  Plan\tthe\u202Ebeta\n launch ", 80)).toBe("Plan the beta launch");
    expect(titleFrom("😀😀😀", 2)).toBe("😀😀");
    expect(titleFrom("\u200B\u200B", 10)).toBeNull();
    expect(titleFrom("a\uD800b", 10)).toBe("ab");
  });
});

describe("passwords", () => {
  it("refuse an unpaired surrogate (it would hash like U+FFFD)", () => {
    const base = { email: "a@b.co", name: "A" };
    expect(signupSchema.safeParse({ ...base, password: "long enough \uD800" }).success).toBe(false);
    expect(signupSchema.safeParse({ ...base, password: "long enough 😀 ok" }).success).toBe(true);
    expect(loginSchema.safeParse({ email: "a@b.co", password: "x\uDC00" }).success).toBe(false);
  });
});

describe("text people type, second probe (issue 12)", () => {
  const named = (name: string) => refusal(createOrgSchema, { name });

  it("treats combining marks without a base as invisible, and refuses a leading one", () => {
    for (const blank of [
      "\u00ad\u034f",
      "\u034f",
      "\u0301\u0302",
      "\ufe0f",
      "\u200b\u0301",
      " \u0301 ",
    ]) {
      expect(named(blank)?.message, JSON.stringify(blank)).toBe("must contain visible characters");
    }
    expect(named("\u0301Acme")?.message).toBe("must not start with a combining mark");
    expect(named(" \u0301Acme")?.message).toBe("must not start with a combining mark");
    // Marks on a base are ordinary text (decomposed accents, Devanagari vowel signs, emoji).
    expect(createOrgSchema.parse({ name: "Cafe\u0301" }).name).toBe("Caf\u00e9");
    expect(createOrgSchema.parse({ name: "हिन्दी" }).name).toBe("हिन्दी");
    expect(createOrgSchema.parse({ name: "❤\ufe0f team" }).name).toBe("❤\ufe0f team");
  });

  it("refuses the bidi marks LRM, RLM and ALM like the other bidi controls", () => {
    for (const mark of ["\u200e", "\u200f", "\u061c"]) {
      expect(named(`invoice${mark}fdp.exe`)?.message, mark).toMatch(/bidirectional control/);
      expect(refusal(memorySchema, { [`k${mark}`]: 1 })?.message).toMatch(/bidirectional/);
    }
  });

  it("refuses U+FFFD, what bytes that are not UTF-8 decode to, in names and sign-up passwords", () => {
    expect(named("Acme \ufffd")?.message).toMatch(/^must be valid UTF-8 text/);
    const subject = { type: "session", id: "ses_x" };
    expect(refusal(erasureRequestSchema, { subject, reason: "\ufffd" })?.path).toBe("reason");
    const base = { email: "a@b.co", name: "A" };
    expect(refusal(signupSchema, { ...base, password: "long enough \ufffd" })).toEqual({
      path: "password",
      message: "must be valid UTF-8 text (it has U+FFFD, what bytes that are not UTF-8 decode to)",
    });
    // A login is not refused for it: the password may predate the rule.
    expect(loginSchema.safeParse({ email: "a@b.co", password: "x\ufffd" }).success).toBe(true);
  });

  it("refuses NUL and unpaired surrogates anywhere inside memory values, and keeps other text", () => {
    expect(refusal(memorySchema, { notes: "a\u0000b" })).toEqual({
      path: "notes",
      message: "must not contain NUL characters (U+0000)",
    });
    expect(refusal(memorySchema, { notes: ["fine", { deep: "x\ud800" }] })).toEqual({
      path: "notes.1.deep",
      message: "must be valid Unicode text (it has an unpaired surrogate)",
    });
    expect(refusal(memorySchema, { notes: { "k\u0000": 1 } })).toEqual({
      path: "notes.k\u0000",
      message: "a key must not contain NUL characters (U+0000)",
    });
    expect(refusal(memorySchema, { notes: { "\udc00": 1 } })?.path).toBe("notes.\udc00");
    const kept = { notes: "line one\n\tline two \u202e \u200f \ufffd \u0007 🚀", list: ["\u200b"] };
    expect(memorySchema.parse(kept)).toEqual(kept);
  });

  it("titles drop bidi marks, U+FFFD and leading marks", () => {
    expect(titleFrom("\u200fPlan\u200e the \ufffdlaunch", 80)).toBe("Plan the launch");
    expect(titleFrom("\u0301\u0302 hello", 80)).toBe("hello");
    expect(titleFrom("\u00ad\u034f", 80)).toBeNull();
  });
});
