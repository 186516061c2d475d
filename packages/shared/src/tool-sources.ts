/**
 * Tools from the tenant's own product (issue 30, docs/2026-12-06-tools.md): an org's tool sources
 * (remote MCP servers and HTTP actions), their tools, and the record of each call. Request schemas
 * are strict; the response schemas are what the routes answer (the OpenAPI document is generated
 * from them, the conformance test checks real answers against them).
 */
import { z } from "zod";
import { BUILT_IN_TOOLS, SEARCH_KNOWLEDGE_TOOL } from "./assistants.ts";
import { microsSchema } from "./billing.ts";
import { jsonValueProblem } from "./json.ts";
import { humanText } from "./schemas.ts";
import { webUrlSchema } from "./urls.ts";

/** A tool reads (runs when the model calls it) or writes (runs only once the person approves). */
export const TOOL_ACCESS = ["read", "write"] as const;
export type ToolAccess = (typeof TOOL_ACCESS)[number];

export const TOOL_SOURCE_KINDS = ["mcp", "http"] as const;
export type ToolSourceKind = (typeof TOOL_SOURCE_KINDS)[number];

/** HTTP methods an action may use. */
export const HTTP_ACTION_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
export type HttpActionMethod = (typeof HTTP_ACTION_METHODS)[number];

/**
 * A source tool's own name (an MCP server's, or an action's): what the MCP specification allows
 * that a model's tool name can carry (letters, digits, `_`, `-`, `.`), at most 64 characters. A
 * listed MCP tool named otherwise is shown but cannot be switched on.
 */
export const SOURCE_TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The name the model is given for a source's tool: its own name within the model's tool-name
 * rules (`[A-Za-z0-9_-]`, at most 64 characters; `.` and anything else become `_`).
 */
export const modelToolName = (name: string): string =>
  name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);

/**
 * Names reserved for Parley's built-in tools (the project tools and the knowledge search): a
 * source's tool whose model-facing name is one of them is never offered (an MCP tool is listed
 * with `usable: false`, an HTTP action so named is refused), so nothing shadows a built-in.
 */
export const RESERVED_TOOL_NAMES: ReadonlySet<string> = new Set<string>([
  ...BUILT_IN_TOOLS.map((tool) => tool.name),
  SEARCH_KNOWLEDGE_TOOL,
]);

/** Whether a source's tool named `name` would take a built-in's name. */
export const isReservedToolName = (name: string): boolean =>
  RESERVED_TOOL_NAMES.has(modelToolName(name));

/**
 * The first of a profile's tools the model could not be given under a name of its own: a
 * source's tool whose model-facing name is reserved, or the same as an earlier source tool's
 * (two sources both offering `search`). Null when every name is distinct. A profile naming one
 * is refused (409, routes/profiles.ts); a turn leaves it out (`withoutNameCollisions`).
 */
export function toolNameCollision(
  names: readonly string[],
): { index: number; name: string; modelName: string; with: string } | null {
  const taken = new Map<string, string>();
  for (const [index, name] of names.entries()) {
    const ref = parseSourceToolRef(name);
    if (!ref) continue;
    const modelName = modelToolName(ref.toolName);
    if (RESERVED_TOOL_NAMES.has(modelName)) {
      return { index, name, modelName, with: `the built-in tool ${modelName}` };
    }
    const earlier = taken.get(modelName);
    if (earlier !== undefined) return { index, name, modelName, with: earlier };
    taken.set(modelName, name);
  }
  return null;
}

/**
 * A turn's tools without the source tools `toolNameCollision` would refuse (a profile saved
 * before names were checked): the first to take a name keeps it, built-ins always do, so the
 * prompt and the tool set name the same tools and nothing runs under another's name.
 */
export function withoutNameCollisions(names: readonly string[]): string[] {
  const kept: string[] = [];
  for (const name of names) {
    if (toolNameCollision([...kept, name]) === null) kept.push(name);
  }
  return kept;
}

/** How a profile names a source's tool: `source:<sourceId>:<toolName>`. */
export const SOURCE_TOOL_REF = /^source:(tsrc_[0-9a-z]{26}):([A-Za-z0-9_.-]{1,64})$/;

export const sourceToolRef = (sourceId: string, toolName: string): string =>
  `source:${sourceId}:${toolName}`;

/** The source id and tool name of a profile's `source:<id>:<name>`, or null for another name. */
export function parseSourceToolRef(name: string): { sourceId: string; toolName: string } | null {
  const match = SOURCE_TOOL_REF.exec(name);
  return match?.[1] && match[2] ? { sourceId: match[1], toolName: match[2] } : null;
}

/** Largest JSON schema of a tool's arguments, in bytes of its JSON text. */
export const MAX_TOOL_SCHEMA_BYTES = 16 * 1024;
/** Most tools one source offers (an MCP server listing more: the first ones, a note says so). */
export const MAX_SOURCE_TOOLS = 64;

/**
 * A JSON schema of a tool's arguments: an object schema (`type: "object"`), at most 16 KB of JSON
 * and 32 levels deep, without `__proto__` keys.
 */
export const toolInputSchemaSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (value.type !== "object") {
    ctx.addIssue({ code: "custom", message: 'must be a JSON schema with type "object"' });
    return;
  }
  const problem = jsonValueProblem(value);
  if (problem) {
    ctx.addIssue({ code: "custom", message: problem.message, path: problem.path });
    return;
  }
  if (new TextEncoder().encode(JSON.stringify(value)).byteLength > MAX_TOOL_SCHEMA_BYTES) {
    ctx.addIssue({ code: "custom", message: `must be at most ${MAX_TOOL_SCHEMA_BYTES} bytes` });
  }
});

/**
 * An action's path under the source's URL: starts with `/`, `{name}` placeholders filled from the
 * arguments (each encoded as one path segment), no query or fragment (arguments not in the path
 * go to the query of a GET or DELETE, and to the JSON body otherwise), no `.` or `..` segment and
 * no backslash. Nor a percent-encoded `.`, `/`, `\` or `%` (`%2e`, `%2F`, `%5c`, `%25`, any
 * case): `new URL` turns `%2e%2e` into `..` and leaves the source's base path (the probe's
 * `/%2e%2e/%2e%2e/admin/{id}`), servers may decode `%2f` and `%5c` into separators, and `%25`
 * would smuggle any of them past one decoding. Written plainly they are refused or harmless.
 */
export const actionPathSchema = z
  .string()
  .min(1)
  .max(500)
  .refine((path) => !/%(?:2e|2f|5c|25)/i.test(path) && !path.includes("\\"), {
    message: "must not percent-encode . / \\ or % (%2e, %2f, %5c, %25), nor contain a backslash",
  })
  .regex(/^\/[A-Za-z0-9\-._~!$&'()*+,;=:@/{}%]*$/, "must be a path such as /orders/{orderId}")
  .refine(
    (path) =>
      !path.includes("//") &&
      !path.split("/").some((segment) => segment === ".." || segment === "."),
    { message: "must not contain //, . or .. segments" },
  )
  .refine((path) => /^(?:[^{}]|\{[A-Za-z_][A-Za-z0-9_]*\})*$/.test(path), {
    message: "placeholders must look like {name}",
  });

/** One HTTP action of a source, as an owner or admin writes it (or the OpenAPI import makes it). */
export const httpActionSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z][a-z0-9_]{0,63}$/, "must be a tool name such as order_status (a-z, 0-9, _)")
    .refine((name) => !isReservedToolName(name), {
      message: "is the name of a Parley built-in tool: choose another",
    }),
  description: humanText({ min: 1, max: 2000, multiline: true }),
  method: z.enum(HTTP_ACTION_METHODS),
  path: actionPathSchema,
  inputSchema: toolInputSchemaSchema.default({ type: "object", properties: {} }),
  /** Absent: write (a tool not marked read asks the person first). */
  access: z.enum(TOOL_ACCESS).default("write"),
});
export type HttpAction = z.output<typeof httpActionSchema>;

/** Headers a static credential may not be sent as: Parley's own, or what the transport sets. */
const RESERVED_HEADERS = new Set([
  "authorization",
  "cookie",
  "host",
  "content-type",
  "content-length",
  "transfer-encoding",
  "connection",
  "accept",
  "mcp-session-id",
  "mcp-protocol-version",
  "last-event-id",
]);

/**
 * A static credential sent with every call of the source (`header: value`), stored sealed and
 * never returned. The identity token always travels as `Authorization: Bearer`, so the credential
 * takes another header (`X-Api-Key`, ...).
 */
export const toolCredentialSchema = z.strictObject({
  header: z
    .string()
    .regex(/^[A-Za-z0-9-]{1,64}$/, "must be a header name such as X-Api-Key")
    .refine((name) => !RESERVED_HEADERS.has(name.toLowerCase()), {
      message: "must not be a header Parley or the transport sets (Authorization, Cookie, ...)",
    }),
  value: z
    .string()
    .min(1)
    .max(2048)
    .regex(/^[\x21-\x7e][\x20-\x7e]*$/, "must be printable ASCII without line breaks"),
});
export type ToolCredential = z.output<typeof toolCredentialSchema>;

/** Where a source is: an http(s) URL without user name, password or fragment. */
const sourceUrl = webUrlSchema(500).refine((url) => !url.includes("#"), {
  message: "must not contain a fragment",
});

/** Per MCP tool name, how an owner or admin marked it (over the server's `readOnlyHint`). */
const accessOverrides = z
  .record(z.string().regex(SOURCE_TOOL_NAME, "must be a tool name"), z.enum(TOOL_ACCESS))
  .refine((record) => Object.keys(record).length <= MAX_SOURCE_TOOLS, {
    message: `must mark at most ${MAX_SOURCE_TOOLS} tools`,
  });

const common = {
  name: humanText({ min: 1, max: 100 }),
  description: humanText({ min: 1, max: 1000, multiline: true }).nullable().default(null),
  /** Charged per call through the org's ledger (0: free). At most $100 a call. */
  priceMicros: microsSchema.min(0).max(100_000_000).default(0),
  credential: toolCredentialSchema.nullable().default(null),
};

const actions = z
  .array(httpActionSchema)
  .max(MAX_SOURCE_TOOLS)
  .refine((list) => new Set(list.map((a) => a.name)).size === list.length, {
    message: "must not name an action twice",
  });

/** `POST /api/orgs/:orgId/tool-sources`. */
export const createToolSourceSchema = z.discriminatedUnion("kind", [
  z.strictObject({
    kind: z.literal("mcp"),
    ...common,
    /** The MCP server's streamable HTTP endpoint. */
    url: sourceUrl,
    access: accessOverrides.default({}),
  }),
  z.strictObject({
    kind: z.literal("http"),
    ...common,
    /** The base URL: every action is on its origin. */
    url: sourceUrl,
    actions: actions.default([]),
  }),
]);
export type CreateToolSource = z.output<typeof createToolSourceSchema>;
/** What a client sends to register a source (defaults may be left out). */
export type CreateToolSourceInput = z.input<typeof createToolSourceSchema>;

/** `PATCH /api/tool-sources/:id`: what changes (`credential: null` removes it). */
export const updateToolSourceSchema = z
  .strictObject({
    name: common.name.optional(),
    // Not `common.description.optional()`: zod 4 applies a default under `.optional()`, so a
    // PATCH that left the description out set it to null (src/patch-schemas.test.ts).
    description: humanText({ min: 1, max: 1000, multiline: true }).nullable().optional(),
    priceMicros: microsSchema.min(0).max(100_000_000).optional(),
    credential: toolCredentialSchema.nullable().optional(),
    /** False switches the source off: no turn offers its tools; calls under way are refused. */
    enabled: z.boolean().optional(),
    url: sourceUrl.optional(),
    /** MCP sources only. */
    access: accessOverrides.optional(),
    /** HTTP sources only: the whole list, replacing the last. */
    actions: actions.optional(),
  })
  .refine((value) => Object.keys(value).length > 0, { message: "must change something" });
export type UpdateToolSource = z.output<typeof updateToolSourceSchema>;
export type UpdateToolSourceInput = z.input<typeof updateToolSourceSchema>;

/** Largest OpenAPI document accepted, in bytes of its JSON. */
export const MAX_OPENAPI_BYTES = 512 * 1024;

/** `POST /api/tool-sources/:id/import-openapi`: an OpenAPI 3.x document (JSON). */
export const importOpenApiSchema = z.strictObject({
  document: z.record(z.string(), z.unknown()),
});
export type ImportOpenApi = z.output<typeof importOpenApiSchema>;

// ---- what the routes answer ----

const iso = z.string().meta({ description: "ISO 8601 timestamp" });

export const sourceToolSchema = z
  .strictObject({
    name: z.string(),
    /** What a profile's `tools` names to switch it on (`source:<sourceId>:<name>`). */
    ref: z.string(),
    description: z.string(),
    /**
     * What a call does: a write asks the person first. An MCP tool's is an owner's or admin's
     * mark, else what Parley accepted of the server's hints (a later hint may make it stricter,
     * never looser: docs/2026-12-06-tools.md).
     */
    access: z.enum(TOOL_ACCESS),
    /**
     * MCP only (null for HTTP actions): what the server's `readOnlyHint` says now. `read` here
     * with `access: write` is a tool the server relaxed after it was accepted as write: it still
     * asks first until an owner or admin marks it read.
     */
    serverAccess: z.enum(TOOL_ACCESS).nullable(),
    inputSchema: z.record(z.string(), z.unknown()),
    /** HTTP actions only. */
    method: z.enum(HTTP_ACTION_METHODS).nullable(),
    path: z.string().nullable(),
    /** False for a listed MCP tool whose name or schema Parley cannot offer a model. */
    usable: z.boolean(),
  })
  .meta({ id: "SourceTool" });
export type SourceTool = z.output<typeof sourceToolSchema>;

export const toolSourceHealthSchema = z
  .strictObject({
    /** `unhealthy` after TOOL_SOURCE_UNHEALTHY_AFTER failed calls in a row; `unknown`: no call yet. */
    status: z.enum(["healthy", "unhealthy", "unknown"]),
    consecutiveFailures: z.number().int(),
    /** The last error's text: owners and admins only (null for members, who get its class). */
    lastError: z.string().nullable(),
    /**
     * The last error's class (`timeout`, `unauthorized`, `http_status`, ...), without its text:
     * what a screen shows (the text may quote the tenant's server).
     */
    lastErrorCode: z.string().nullable(),
    lastErrorAt: iso.nullable(),
    lastSuccessAt: iso.nullable(),
  })
  .meta({ id: "ToolSourceHealth" });

export const toolSourceSchema = z
  .strictObject({
    id: z.string(),
    orgId: z.string(),
    kind: z.enum(TOOL_SOURCE_KINDS),
    name: z.string(),
    description: z.string().nullable(),
    url: z.string(),
    priceMicros: microsSchema,
    /** False: switched off by an owner or admin (no turn offers its tools). */
    enabled: z.boolean(),
    /** The credential's header when one is set; its value is never returned. */
    credential: z.strictObject({ header: z.string() }).nullable(),
    /** MCP only: the tools an owner or admin marked read or write. */
    access: z.record(z.string(), z.enum(TOOL_ACCESS)),
    tools: z.array(sourceToolSchema),
    toolsListedAt: iso.nullable(),
    version: z.number().int(),
    health: toolSourceHealthSchema,
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: "ToolSource" });
export type ToolSource = z.output<typeof toolSourceSchema>;

export const toolSourceListSchema = z
  .strictObject({ items: z.array(toolSourceSchema), nextCursor: z.string().nullable() })
  .meta({ id: "ToolSourceList" });

/** How a tool call ended. */
export const TOOL_CALL_STATUSES = [
  "ok",
  "tool_error",
  "timeout",
  "failed",
  "refused",
  "aborted",
] as const;
export type ToolCallStatus = (typeof TOOL_CALL_STATUSES)[number];

export const toolCallSchema = z
  .strictObject({
    id: z.string(),
    sourceId: z.string(),
    toolName: z.string(),
    sessionId: z.string().nullable(),
    caller: z.strictObject({ kind: z.enum(["member", "end_user"]), id: z.string() }),
    access: z.enum(TOOL_ACCESS),
    /** Who approved a write (the person in the chat); null for a read. */
    approvedBy: z.string().nullable(),
    status: z.enum(TOOL_CALL_STATUSES),
    errorCode: z.string().nullable(),
    durationMs: z.number().int(),
    requestBytes: z.number().int(),
    responseBytes: z.number().int(),
    priceMicros: microsSchema,
    createdAt: iso,
  })
  .meta({ id: "ToolCall" });
export type ToolCall = z.output<typeof toolCallSchema>;

export const toolCallListSchema = z
  .strictObject({ items: z.array(toolCallSchema), nextCursor: z.string().nullable() })
  .meta({ id: "ToolCallList" });

/** What an OpenAPI import answers: the source with its new actions, and what was left out. */
export const openApiImportResultSchema = z
  .strictObject({
    source: toolSourceSchema,
    imported: z.number().int(),
    skipped: z.array(z.strictObject({ method: z.string(), path: z.string(), reason: z.string() })),
  })
  .meta({ id: "OpenApiImportResult" });
export type OpenApiImportResult = z.output<typeof openApiImportResultSchema>;

/**
 * One of an end user's own tool calls, as the embed shows it (`GET
 * /api/embed/sessions/:sessionId/tool-calls`): the tool and its source's name, how it ended,
 * whether the end user approved it. No caller or approver ids (they are the end user's own), no
 * bytes; the price is 0 when the app hides cost, as the session's spend is.
 */
export const endUserToolCallSchema = z
  .strictObject({
    id: z.string(),
    toolName: z.string(),
    /** Null once the source is deleted. */
    sourceName: z.string().nullable(),
    access: z.enum(TOOL_ACCESS),
    /** A write the end user approved; false for a read. */
    approved: z.boolean(),
    status: z.enum(TOOL_CALL_STATUSES),
    errorCode: z.string().nullable(),
    durationMs: z.number().int(),
    priceMicros: microsSchema,
    createdAt: iso,
  })
  .meta({ id: "EndUserToolCall" });
export type EndUserToolCall = z.output<typeof endUserToolCallSchema>;

export const endUserToolCallListSchema = z
  .strictObject({ items: z.array(endUserToolCallSchema), nextCursor: z.string().nullable() })
  .meta({ id: "EndUserToolCallList" });
