import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
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
 * The HTTP status a failure of the MCP client carries: `status` or `data.status`, or the code of
 * the MCP SDK's `StreamableHTTPError` (its `code` is the HTTP status: a 401 there read as a
 * JSON-RPC error, `tool_error`), or a cause's (the agents SDK wraps the transport's errors).
 */
function httpStatusOf(error: unknown, depth = 0): number | null {
  if (!error || typeof error !== "object" || depth > 4) return null;
  const record = error as {
    code?: unknown;
    status?: unknown;
    data?: { status?: unknown };
    cause?: unknown;
  };
  if (typeof record.status === "number") return record.status;
  if (typeof record.data?.status === "number") return record.data.status;
  if (
    error instanceof StreamableHTTPError &&
    typeof record.code === "number" &&
    record.code >= 100
  ) {
    return record.code;
  }
  return httpStatusOf(record.cause, depth + 1);
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
