import {
  InsufficientScopeError,
  SdkHttpError,
  UnauthorizedError,
} from "@modelcontextprotocol/client";
import {
  isReservedToolName,
  MAX_SOURCE_TOOLS,
  MAX_TOOL_SCHEMA_BYTES,
  SOURCE_TOOL_NAME,
} from "@parley/shared";
import { ToolCallError } from "./call-error.ts";
import { findCallError } from "./guarded-fetch.ts";

/**
 * An MCP tool as Parley keeps it (D1 `tool_sources.tools`): what the server listed, bounded.
 * `readOnly` is the server's `annotations.readOnlyHint` (true: a read tool; anything else: write,
 * unless an owner or admin marks it). `usable` is false for a tool Parley cannot offer a model: a
 * name outside `SOURCE_TOOL_NAME` or reserved for a built-in tool (`update_project_memory`, ...:
 * nothing shadows a built-in), or an input schema that is not a bounded object schema.
 */
export interface ListedTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
  usable: boolean;
}

const MAX_DESCRIPTION = 2000;

interface McpTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema?: unknown;
  annotations?: { readOnlyHint?: boolean | undefined; title?: string | undefined } | undefined;
}

/** The server's tools as Parley keeps them: the first `MAX_SOURCE_TOOLS`, each bounded. */
export function toListedTools(tools: readonly McpTool[]): {
  tools: ListedTool[];
  truncated: boolean;
} {
  return {
    tools: tools.slice(0, MAX_SOURCE_TOOLS).map((tool) => {
      const schema = tool.inputSchema;
      const schemaOk =
        typeof schema === "object" &&
        schema !== null &&
        !Array.isArray(schema) &&
        (schema as { type?: unknown }).type === "object" &&
        new TextEncoder().encode(JSON.stringify(schema)).byteLength <= MAX_TOOL_SCHEMA_BYTES;
      const name = String(tool.name).slice(0, 128);
      const description = String(
        tool.description ?? tool.title ?? tool.annotations?.title ?? name,
      ).slice(0, MAX_DESCRIPTION);
      return {
        name,
        description,
        inputSchema: schemaOk
          ? (schema as Record<string, unknown>)
          : { type: "object", properties: {} },
        readOnly: tool.annotations?.readOnlyHint === true,
        usable: SOURCE_TOOL_NAME.test(name) && !isReservedToolName(name) && schemaOk,
      };
    }),
    truncated: tools.length > MAX_SOURCE_TOOLS,
  };
}

/**
 * The HTTP status a failure of the MCP client carries. The agents SDK's client is the MCP SDK's
 * v2 client (`@modelcontextprotocol/client`, not the 1.x `@modelcontextprotocol/sdk` the test
 * servers are built with): its `SdkHttpError` carries the status (`status`, `data.status`; its
 * `code` is a string such as `CLIENT_HTTP_AUTHENTICATION`), a 401 without an auth provider is
 * its `UnauthorizedError`, and a 403 whose `WWW-Authenticate` says `insufficient_scope` its
 * `InsufficientScopeError`, neither with a status (both read `malformed` before). A cause's
 * status counts too (the agents SDK wraps the transport's errors).
 */
function httpStatusOf(error: unknown, depth = 0): number | null {
  if (!error || typeof error !== "object" || depth > 4) return null;
  if (InsufficientScopeError.isInstance(error)) return 403;
  if (UnauthorizedError.isInstance(error)) return 401;
  const record = error as {
    code?: unknown;
    status?: unknown;
    data?: { status?: unknown };
    cause?: unknown;
  };
  if (typeof record.status === "number") return record.status;
  if (typeof record.data?.status === "number") return record.data.status;
  if (SdkHttpError.isInstance(error) && typeof record.code === "number" && record.code >= 100) {
    return record.code;
  }
  return httpStatusOf(record.cause, depth + 1);
}

/**
 * A 401 or 403 answer as the error it means: the server refused Parley's identity token (or the
 * static credential). Read off the response by the MCP connections' own `fetch`, since the agents
 * SDK's `connect` keeps none of the client's errors when it fails (the connection is only
 * `failed`, or `authenticating` for some 401s), which read `malformed` (a v2 server's 403, its
 * 401 to the version probe).
 */
export function refusalOfStatus(status: number): ToolCallError | null {
  return status === 401 || status === 403
    ? new ToolCallError(
        "unauthorized",
        `The tool's server refused Parley's identity token (${status})`,
      )
    : null;
}

/** The JSON-RPC method of a request body the MCP client sends (null: not one, or a batch). */
export function rpcMethodOf(body: BodyInit | null | undefined): string | null {
  if (typeof body !== "string") return null;
  try {
    const parsed = JSON.parse(body) as { method?: unknown } | null;
    return typeof parsed?.method === "string" ? parsed.method : null;
  } catch {
    return null;
  }
}

/**
 * A failed `connect` of the agents SDK's MCP client as a call error. On a 401 the SDK leaves the
 * connection `authenticating` (it expects an OAuth flow) and throws a plain "Failed to discover"
 * error, which read as `malformed` (the probe of 2026-12-06): the connection's state says why.
 * Both MCP connections (the calls' and the listener's) go through this.
 */
export function connectError(error: unknown, connectionState: string | undefined): ToolCallError {
  if (connectionState === "authenticating") {
    return new ToolCallError("unauthorized", "The MCP server refused Parley's identity token");
  }
  return mcpError(error);
}

/**
 * A failure of the MCP client as a call error: ours (the guarded fetch's, carried in the
 * causes), the server's JSON-RPC error (a tool error with its message), an HTTP status (401 and
 * 403: the server refused Parley's identity token), or an answer that could not be read.
 */
export function mcpError(error: unknown): ToolCallError {
  const ours = findCallError(error);
  if (ours) return ours;
  const record = (error ?? {}) as { code?: unknown; message?: unknown };
  const status = httpStatusOf(error);
  if (status === 401 || status === 403) {
    return new ToolCallError(
      "unauthorized",
      `The tool's server refused Parley's identity token (${status})`,
    );
  }
  if (status !== null) {
    return new ToolCallError("http_status", `The tool's server answered ${status}`);
  }
  if (typeof record.code === "number") {
    const message = typeof record.message === "string" ? record.message.slice(0, 300) : "";
    return new ToolCallError("tool_error", `The tool's server answered with an error: ${message}`);
  }
  if (record.code === "REQUEST_TIMEOUT" || record.code === "RequestTimeout") {
    return new ToolCallError("timeout", "The tool did not answer in time");
  }
  return new ToolCallError("malformed", "The tool's server sent an answer Parley could not read", {
    cause: error,
  });
}
