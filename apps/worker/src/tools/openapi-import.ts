import { type HttpAction, httpActionSchema, MAX_SOURCE_TOOLS } from "@parley/shared";

/**
 * HTTP actions from an OpenAPI 3.x document (`POST /api/tool-sources/:id/import-openapi`): each
 * operation becomes an action. Its name is the `operationId` (snake_cased; else method and path),
 * its description the summary or description, its path the document's path (on the source's URL:
 * put a `servers` prefix in the source's URL), its arguments one object schema of its path and
 * query parameters and its JSON body's properties (local `$ref`s resolved). GET is a read, every
 * other method a write, unless the operation says `x-parley-access: read` or `write`. An
 * operation that does not make a valid action is skipped with the reason.
 */

const METHODS = ["get", "post", "put", "patch", "delete"] as const;
const MAX_REF_DEPTH = 12;

export interface ImportResult {
  actions: HttpAction[];
  skipped: { method: string; path: string; reason: string }[];
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `#/components/...` references resolved in place (depth-bounded: a cycle becomes `{}`). */
function resolveRefs(value: unknown, document: Json, depth = 0): unknown {
  if (depth > MAX_REF_DEPTH) return {};
  if (Array.isArray(value)) return value.map((item) => resolveRefs(item, document, depth + 1));
  if (!isObject(value)) return value;
  if (typeof value.$ref === "string") {
    const target = pointer(document, value.$ref);
    return target === undefined ? {} : resolveRefs(target, document, depth + 1);
  }
  const out: Json = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === "__proto__") continue;
    out[key] = resolveRefs(item, document, depth + 1);
  }
  return out;
}

function pointer(document: Json, ref: string): unknown {
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (!isObject(node) || !(key in node)) return undefined;
    node = node[key];
  }
  return node;
}

const snake = (text: string) =>
  text
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "")
    .replace(/^(\d)/, "op_$1")
    .slice(0, 64);

/** The operation's arguments as one object schema. */
function argumentsSchema(operation: Json, pathItem: Json, document: Json): Json {
  const properties: Json = {};
  const required: string[] = [];
  const parameters = [
    ...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []),
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
  ].map((p) => resolveRefs(p, document));
  for (const parameter of parameters) {
    if (!isObject(parameter) || typeof parameter.name !== "string") continue;
    if (parameter.in !== "path" && parameter.in !== "query") continue;
    properties[parameter.name] = {
      ...(isObject(parameter.schema) ? parameter.schema : { type: "string" }),
      ...(typeof parameter.description === "string" ? { description: parameter.description } : {}),
    };
    if (parameter.in === "path" || parameter.required === true) required.push(parameter.name);
  }
  const body = resolveRefs(operation.requestBody, document);
  const content = isObject(body) && isObject(body.content) ? body.content : null;
  const schema =
    content && isObject(content["application/json"]) ? content["application/json"].schema : null;
  if (isObject(schema) && isObject(schema.properties)) {
    Object.assign(properties, schema.properties);
    if (Array.isArray(schema.required)) {
      required.push(...schema.required.filter((name): name is string => typeof name === "string"));
    }
  }
  return {
    type: "object",
    properties,
    ...(required.length > 0 ? { required: [...new Set(required)] } : {}),
  };
}

export function importOpenApi(document: Json): ImportResult | { error: string } {
  if (typeof document.openapi !== "string" || !document.openapi.startsWith("3.")) {
    return { error: "document.openapi: must be an OpenAPI 3.x document" };
  }
  if (!isObject(document.paths)) return { error: "document.paths: must be an object" };
  const actions: HttpAction[] = [];
  const skipped: ImportResult["skipped"] = [];
  const names = new Set<string>();
  for (const [path, rawItem] of Object.entries(document.paths)) {
    const pathItem = resolveRefs(rawItem, document);
    if (!isObject(pathItem)) continue;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const upper = method.toUpperCase();
      if (actions.length >= MAX_SOURCE_TOOLS) {
        skipped.push({ method: upper, path, reason: `more than ${MAX_SOURCE_TOOLS} operations` });
        continue;
      }
      const marked = operation["x-parley-access"];
      let name = snake(
        typeof operation.operationId === "string" ? operation.operationId : `${method}_${path}`,
      );
      if (names.has(name)) name = snake(`${name}_${method}`);
      const description =
        [operation.summary, operation.description]
          .filter((text): text is string => typeof text === "string" && text.trim() !== "")
          .join(": ")
          .slice(0, 2000) || `${upper} ${path}`;
      const parsed = httpActionSchema.safeParse({
        name,
        description,
        method: upper,
        path,
        inputSchema: argumentsSchema(operation, pathItem, document),
        access:
          marked === "read" || marked === "write" ? marked : method === "get" ? "read" : "write",
      });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        skipped.push({
          method: upper,
          path,
          reason: `${issue?.path.join(".") || "operation"}: ${issue?.message ?? "invalid"}`,
        });
        continue;
      }
      names.add(parsed.data.name);
      actions.push(parsed.data);
    }
  }
  return { actions, skipped };
}
