import type {
  HttpActionMethod,
  ToolAccess,
  ToolSource,
  UpdateToolSourceInput,
} from "@parley/shared";
import { isApiError } from "../../lib/api.ts";
import { dollarsInput } from "../../lib/money.ts";
import { dollarsToMicros, parseJsonObject } from "./source-words.ts";

/**
 * The source editor's form logic (pure, tested in source-form.test.ts): a source as the form's
 * text fields, the form back as the smallest `PATCH /api/tool-sources/:id` body (only what
 * changed), and the API's `field` of a refusal as the form field it concerns.
 */

/** One HTTP action as typed: the argument schema is JSON text until it is sent. */
export interface ActionDraft {
  /** Stable across edits of the name (React's key), never sent. */
  key: string;
  name: string;
  description: string;
  method: HttpActionMethod;
  path: string;
  access: ToolAccess;
  schema: string;
}

/** What happens to the static credential: kept as it is, replaced, or removed. */
export type CredentialChoice = "keep" | "replace" | "remove";

export interface SourceForm {
  url: string;
  /** Dollars per call, as typed ("0.01"). */
  price: string;
  enabled: boolean;
  credential: CredentialChoice;
  /** The new credential (choice `replace`): never filled from the source, which has no value. */
  header: string;
  secret: string;
  /** HTTP sources only. */
  actions: ActionDraft[];
  /** MCP sources only: per tool, the owner's mark over the server's (`server`: none). */
  marks: Record<string, ToolAccess | "server">;
}

/** Errors of the form, by field: `url`, `price`, `header`, `secret`, `actions.<i>.<field>`, `form`. */
export type FormErrors = Record<string, string>;

const schemaText = (schema: Record<string, unknown>) => JSON.stringify(schema, null, 2);

let drafts = 0;
const draftKey = () => `draft-${++drafts}`;

/** A new, empty action (write unless marked read, as the API's default). */
export const blankAction = (): ActionDraft => ({
  key: draftKey(),
  name: "",
  description: "",
  method: "GET",
  path: "/",
  access: "write",
  schema: '{\n  "type": "object",\n  "properties": {}\n}',
});

export function formOf(source: ToolSource): SourceForm {
  return {
    url: source.url,
    price: dollarsInput(source.priceMicros),
    enabled: source.enabled,
    credential: "keep",
    header: source.credential?.header ?? "",
    secret: "",
    actions:
      source.kind === "http"
        ? source.tools.map((tool) => ({
            key: draftKey(),
            name: tool.name,
            description: tool.description,
            method: tool.method ?? "GET",
            path: tool.path ?? "/",
            access: tool.access,
            schema: schemaText(tool.inputSchema),
          }))
        : [],
    marks:
      source.kind === "mcp"
        ? Object.fromEntries(
            source.tools
              .filter((tool) => tool.usable)
              .map((tool) => [tool.name, source.access[tool.name] ?? "server"]),
          )
        : {},
  };
}

type Action = NonNullable<UpdateToolSourceInput["actions"]>[number];

/**
 * The PATCH body for what changed, or the form's own errors (nothing is sent then). Only changed
 * fields are sent: a change of URL, credential or switch moves the source's version (calls under
 * way are refused), so an untouched one must not be sent.
 */
export function patchOf(
  source: ToolSource,
  form: SourceForm,
): { ok: true; patch: UpdateToolSourceInput | null } | { ok: false; errors: FormErrors } {
  const errors: FormErrors = {};
  const patch: UpdateToolSourceInput = {};
  const url = form.url.trim();
  if (url !== source.url) {
    if (url === "") errors.url = "Give the source's URL";
    else patch.url = url;
  }
  const priceMicros = dollarsToMicros(form.price);
  if (priceMicros === null) errors.price = "A number of dollars, such as 0.01";
  else if (priceMicros > 100_000_000) errors.price = "At most $100 a call";
  else if (priceMicros !== source.priceMicros) patch.priceMicros = priceMicros;
  if (form.enabled !== source.enabled) patch.enabled = form.enabled;
  if (form.credential === "remove") {
    if (source.credential !== null) patch.credential = null;
  } else if (form.credential === "replace") {
    if (form.header.trim() === "") errors.header = "Name the header, such as X-Api-Key";
    if (form.secret === "") errors.secret = "Type the new value";
    else patch.credential = { header: form.header.trim(), value: form.secret };
  }
  if (source.kind === "http") {
    const actions: Action[] = [];
    const names = new Set<string>();
    form.actions.forEach((draft, index) => {
      const at = `actions.${index}`;
      const schema = parseJsonObject(draft.schema);
      if (!schema.ok) errors[`${at}.inputSchema`] = `The arguments schema ${schema.message}`;
      if (draft.name.trim() === "") errors[`${at}.name`] = "Name the action";
      else if (names.has(draft.name.trim())) errors[`${at}.name`] = "Another action has this name";
      names.add(draft.name.trim());
      if (draft.description.trim() === "") {
        errors[`${at}.description`] = "Say what it does: the model reads it";
      }
      actions.push({
        name: draft.name.trim(),
        description: draft.description.trim(),
        method: draft.method,
        path: draft.path.trim(),
        access: draft.access,
        inputSchema: schema.ok ? schema.value : {},
      });
    });
    if (!sameActions(source, actions)) patch.actions = actions;
  }
  if (source.kind === "mcp") {
    const access = Object.fromEntries(
      Object.entries(form.marks).flatMap(([name, mark]) =>
        mark === "server" ? [] : [[name, mark]],
      ),
    ) as Record<string, ToolAccess>;
    // Marks of tools the server no longer lists are kept: the form shows only listed ones.
    for (const [name, mark] of Object.entries(source.access)) {
      if (!(name in form.marks)) access[name] = mark;
    }
    if (!sameRecord(access, source.access)) patch.access = access;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, patch: Object.keys(patch).length === 0 ? null : patch };
}

function sameRecord(a: Record<string, string>, b: Record<string, string>): boolean {
  const sorted = (record: Record<string, string>) => JSON.stringify(Object.entries(record).sort());
  return sorted(a) === sorted(b);
}

function sameActions(source: ToolSource, actions: readonly Action[]): boolean {
  const before = source.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    method: tool.method,
    path: tool.path,
    access: tool.access,
    inputSchema: tool.inputSchema,
  }));
  return JSON.stringify(before) === JSON.stringify(actions);
}

/**
 * Where a refusal of the API belongs on the form: its `field` (`url`, `priceMicros`,
 * `credential.value`, `actions.2.path`, ...) as the form's field, else the form as a whole.
 */
export function errorsOfApi(error: unknown): FormErrors {
  const message =
    error instanceof Error ? error.message : "Something went wrong. Please try again.";
  const field = isApiError(error) ? error.field : undefined;
  if (!field) return { form: message };
  // Every problem the API names (`issues`, when several), each at its control; the first wins a
  // control two problems share.
  const issues = isApiError(error) && error.issues.length > 0 ? error.issues : [{ field, message }];
  const errors: FormErrors = {};
  for (const issue of [...issues].reverse())
    Object.assign(errors, { [controlOf(issue.field)]: issue.message });
  return errors;
}

/** The form's control for an API field (`form`: the note under the whole form). */
function controlOf(field: string): string {
  if (field === "priceMicros") return "price";
  if (field === "credential.header") return "header";
  if (field.startsWith("credential")) return "secret";
  const action = /^actions\.(\d+)\.(\w+)/.exec(field);
  if (action) return `actions.${action[1]}.${action[2]}`;
  if (field === "url") return "url";
  if (field.startsWith("access")) return "access";
  return "form";
}
