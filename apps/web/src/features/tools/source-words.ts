import type { ToolSource } from "@parley/shared";
import { formatMicros, parseDollars } from "../../lib/money.ts";

/** A source's health in words and a badge tone: what an admin needs to see at a glance. */
export function healthWords(health: ToolSource["health"]): {
  label: string;
  tone: "success" | "danger" | "neutral";
} {
  if (health.status === "healthy") return { label: "Healthy", tone: "success" };
  if (health.status === "unhealthy") {
    const n = health.consecutiveFailures;
    return { label: `Failing (${n} call${n === 1 ? "" : "s"} in a row)`, tone: "danger" };
  }
  return { label: "Not called yet", tone: "neutral" };
}

/** A price per call in dollars ("Free", "$0.0025 a call"): every micro-dollar of it. */
export function priceWords(micros: number): string {
  return micros === 0 ? "Free" : `${formatMicros(micros, { precise: true })} a call`;
}

/** A price typed in dollars ("0.01") as micro-dollars (empty: free), or null when it is not one. */
export function dollarsToMicros(text: string): number | null {
  if (text.trim() === "") return 0;
  const parsed = parseDollars(text);
  return parsed.ok ? parsed.micros : null;
}

/**
 * A JSON text typed by a person (an argument schema, an OpenAPI document) as an object, or the
 * reason it is not one.
 */
export function parseJsonObject(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { ok: false, message: "must be a JSON object" };
    }
    return { ok: true, value: value as Record<string, unknown> };
  } catch (error) {
    return { ok: false, message: `is not valid JSON (${(error as Error).message})` };
  }
}

/** Why calls of a source failed, from its error class (`timeout`, ...), never the error's text. */
const ERROR_CLASSES: Record<string, string> = {
  url_refused: "its URL is not allowed",
  redirect: "it answered with a redirect",
  timeout: "it took too long to answer",
  too_large: "its answer was too large",
  unreachable: "it could not be reached",
  unauthorized: "it refused Parley's call (401 or 403)",
  http_status: "it answered with an HTTP error",
  malformed: "its answer could not be read",
  tool_error: "the tool reported an error",
  source_gone: "the source changed during the call",
};

export const errorClassWords = (code: string): string =>
  ERROR_CLASSES[code] ? `${ERROR_CLASSES[code]} (${code})` : code;
