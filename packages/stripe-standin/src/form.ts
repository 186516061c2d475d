/**
 * Stripe's v1 request encoding: `application/x-www-form-urlencoded` bodies (and GET query strings)
 * whose keys use bracket notation for nesting, `metadata[org_id]=o1` and
 * `line_items[0][price_data][unit_amount]=500`. The `stripe` client leaves the brackets unencoded,
 * numbers arrays from 0, sends `null` as an empty value, and encodes spaces as `%20`; browsers
 * and curl send `+` and `[]`. All of them decode to the same tree here.
 */
import { invalidRequest, missingParam } from "./errors.ts";

export type FormValue = string | FormObject | FormValue[];
export type FormObject = { [key: string]: FormValue };

const KEY = /^([^[\]]+)((?:\[[^[\]]*\])*)$/;
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/** Decodes a form body or query string into nested objects; all-index objects become arrays. */
export function decodeForm(encoded: string): FormObject {
  const root: FormObject = {};
  for (const [key, value] of new URLSearchParams(encoded)) {
    const match = KEY.exec(key);
    const segments =
      match === null
        ? [key]
        : [
            match[1] ?? key,
            ...[...(match[2] ?? "").matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] ?? ""),
          ];
    insert(root, segments, value, key);
  }
  return arraysOf(root) as FormObject;
}

function insert(root: FormObject, segments: string[], value: string, key: string): void {
  let node = root;
  for (let i = 0; i < segments.length; i++) {
    let segment = segments[i] ?? "";
    if (FORBIDDEN_KEYS.has(segment)) throw invalidRequest(`Invalid parameter name: ${key}`);
    // `a[]=x` appends: number it after the indices already present.
    if (segment === "") segment = String(Object.keys(node).filter((k) => /^\d+$/.test(k)).length);
    const last = i === segments.length - 1;
    const existing = node[segment];
    if (last) {
      if (existing !== undefined && typeof existing !== "string") throw invalidHash(key);
      node[segment] = value;
      return;
    }
    if (existing === undefined) {
      const child: FormObject = {};
      node[segment] = child;
      node = child;
    } else if (typeof existing === "object" && !Array.isArray(existing)) {
      node = existing;
    } else {
      throw invalidHash(key);
    }
  }
}

function invalidHash(key: string) {
  return invalidRequest(`Invalid hash: ${key} was sent both as a value and as a hash.`, {
    param: key,
  });
}

function arraysOf(value: FormValue): FormValue {
  if (typeof value === "string" || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  const converted: FormObject = {};
  for (const key of keys) converted[key] = arraysOf(value[key] as FormValue);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((index) => converted[String(index)] as FormValue);
  }
  return converted;
}

// --- Reading parameters, with Stripe's error messages and bracketed `param` names ---

/** Where a value sits, for `param` in errors: `line_items[0][price_data][currency]`. */
export function paramPath(parent: string, key: string | number): string {
  return parent === "" ? String(key) : `${parent}[${key}]`;
}

/** Refuses any key not in `allowed`, as Stripe does (`parameter_unknown`). */
export function rejectUnknown(obj: FormObject, allowed: ReadonlySet<string>, parent = ""): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) {
      const param = paramPath(parent, key);
      throw invalidRequest(`Received unknown parameter: ${param}`, {
        code: "parameter_unknown",
        param,
      });
    }
  }
}

export function optionalString(obj: FormObject, key: string, parent = ""): string | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  const param = paramPath(parent, key);
  if (typeof value !== "string") {
    throw invalidRequest(`Invalid string: ${param} must be a string.`, { param });
  }
  if (value === "") {
    throw invalidRequest(
      `You passed an empty string for '${param}'. We assume empty values are an attempt to unset a parameter; however '${param}' cannot be unset. You should remove '${param}' from your request or supply a non-empty value.`,
      { code: "parameter_invalid_empty", param },
    );
  }
  return value;
}

/**
 * A string field an update may unset: undefined when absent, null for an empty value (Stripe
 * reads `email=` as "unset email"), the string otherwise.
 */
export function unsettableString(
  obj: FormObject,
  key: string,
  parent = "",
): string | null | undefined {
  if (obj[key] === "") return null;
  return optionalString(obj, key, parent);
}

export function requiredString(obj: FormObject, key: string, parent = ""): string {
  const value = optionalString(obj, key, parent);
  if (value === undefined) throw missingParam(paramPath(parent, key));
  return value;
}

export function optionalInteger(
  obj: FormObject,
  key: string,
  parent = "",
  min = 0,
): number | undefined {
  const value = optionalString(obj, key, parent);
  if (value === undefined) return undefined;
  const param = paramPath(parent, key);
  if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw invalidRequest(`Invalid integer: ${value}`, { code: "parameter_invalid_integer", param });
  }
  const n = Number(value);
  if (n < min) {
    throw invalidRequest(
      `This value must be greater than or equal to ${min} (${param} was ${n}).`,
      { param },
    );
  }
  return n;
}

export function requiredInteger(obj: FormObject, key: string, parent = "", min = 0): number {
  const value = optionalInteger(obj, key, parent, min);
  if (value === undefined) throw missingParam(paramPath(parent, key));
  return value;
}

export function optionalObject(obj: FormObject, key: string, parent = ""): FormObject | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (typeof value === "string" || Array.isArray(value)) {
    const param = paramPath(parent, key);
    throw invalidRequest(`Invalid object: ${param} must be a hash.`, { param });
  }
  return value;
}

export function optionalArray(obj: FormObject, key: string, parent = ""): FormValue[] | undefined {
  const value = obj[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    const param = paramPath(parent, key);
    throw invalidRequest(`Invalid array: ${param} must be an array.`, { param });
  }
  return value;
}

export function optionalEnum<T extends string>(
  obj: FormObject,
  key: string,
  values: readonly T[],
  parent = "",
): T | undefined {
  const value = optionalString(obj, key, parent);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) {
    const param = paramPath(parent, key);
    throw invalidRequest(`Invalid ${param}: must be one of ${values.join(", ")}`, { param });
  }
  return value as T;
}

/** `expand[]` (or `expand[0]`...): a list of dotted paths. */
export function expandPaths(obj: FormObject): string[] {
  const value = obj.expand;
  if (value === undefined) return [];
  const list = typeof value === "string" ? [value] : Array.isArray(value) ? value : null;
  if (list === null || list.some((v) => typeof v !== "string")) {
    throw invalidRequest("Invalid array: expand must be an array of strings.", { param: "expand" });
  }
  return list as string[];
}

const METADATA_MAX_KEYS = 50;
const METADATA_MAX_KEY_CHARS = 40;
const METADATA_MAX_VALUE_CHARS = 500;

/**
 * Metadata with Stripe's limits (50 keys, keys up to 40 characters, values up to 500). An empty
 * value unsets a key, so on create it is simply left out; `metadata=` (empty) means none.
 */
export function metadataParam(obj: FormObject, key: string, parent = ""): Record<string, string> {
  const entries = metadataEntries(obj, key, parent);
  if (entries === null) return {};
  const metadata = Object.fromEntries(entries.filter(([, v]) => v !== ""));
  checkMetadataSize(metadata, paramPath(parent, key));
  return metadata;
}

/**
 * Metadata on an update: `null` when `metadata=` (empty) unsets every key, otherwise each key
 * sent, with `null` for an empty value (that key is unset). Undefined when `metadata` is absent.
 */
export type MetadataUpdate = Record<string, string | null> | null;

export function metadataUpdateParam(
  obj: FormObject,
  key: string,
  parent = "",
): MetadataUpdate | undefined {
  if (obj[key] === undefined) return undefined;
  const entries = metadataEntries(obj, key, parent);
  return entries === null ? null : Object.fromEntries(entries.map(([k, v]) => [k, v || null]));
}

/**
 * `current` with `update` applied as Stripe applies it: sent keys are set or unset, the others
 * stay. The 50-key limit holds for the result.
 */
export function applyMetadataUpdate(
  current: Readonly<Record<string, string>>,
  update: MetadataUpdate,
  param = "metadata",
): Record<string, string> {
  if (update === null) return {};
  const next: Record<string, string> = { ...current };
  for (const [k, v] of Object.entries(update)) {
    if (v === null) delete next[k];
    else next[k] = v;
  }
  checkMetadataSize(next, param);
  return next;
}

/** The `[key, value]` pairs sent, values as sent (empty included); null for `metadata=`. */
function metadataEntries(obj: FormObject, key: string, parent: string): [string, string][] | null {
  const value = obj[key];
  const param = paramPath(parent, key);
  if (value === undefined || value === "") return null;
  if (typeof value === "string" || Array.isArray(value)) {
    throw invalidRequest(`Invalid object: ${param} must be a hash.`, { param });
  }
  return Object.entries(value).map(([k, v]) => {
    const keyParam = paramPath(param, k);
    if (typeof v !== "string") {
      throw invalidRequest(`Invalid string: ${keyParam} must be a string.`, { param: keyParam });
    }
    if (k.length > METADATA_MAX_KEY_CHARS) {
      throw invalidRequest(
        `Metadata keys can have up to ${METADATA_MAX_KEY_CHARS} characters; '${k}' has ${k.length}.`,
        { param: keyParam },
      );
    }
    if (v.length > METADATA_MAX_VALUE_CHARS) {
      throw invalidRequest(
        `Metadata values can have up to ${METADATA_MAX_VALUE_CHARS} characters, but for the key '${k}' you passed ${v.length}.`,
        { param: keyParam },
      );
    }
    return [k, v];
  });
}

function checkMetadataSize(metadata: Record<string, string>, param: string): void {
  if (Object.keys(metadata).length > METADATA_MAX_KEYS) {
    throw invalidRequest(`You can have up to ${METADATA_MAX_KEYS} metadata keys.`, { param });
  }
}

/** A stable text for comparing two requests' parameters (idempotency), whatever the key order. */
export function canonicalParams(value: FormValue): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalParams).join(",")}]`;
  return `{${Object.keys(value)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonicalParams(value[k] as FormValue)}`)
    .join(",")}}`;
}
