import { env } from "cloudflare:test";
import type { CatalogueModel } from "@parley/shared";
import { expect } from "vitest";
import { api, type World } from "./helpers.ts";

/**
 * Turns on chosen profiles and models in workerd tests: what the dev model received (its control
 * API, found by a marker: every test file shares one dev model), the org's allowed models, a
 * session's pick, and profiles made through the API (so the agents hear of each change).
 */

const devModel = env.MODEL_BASE_URL.replace(/\/api\/v1$/, "");

/** Every dev model, instant (`[[latency:0]] [[tps:0]]`: Dev Large takes its time otherwise). */
export const INSTANT = "[[latency:0]] [[tps:0]]";
export const DEV_MODELS = ["parley/dev", "parley/dev-fast", "parley/dev-large", "parley/dev-local"];

export interface SeenMessage {
  role: string;
  content: unknown;
  reasoning_details?: { type: string }[];
}

/** A chat request the dev model received. */
export interface SeenRequest {
  model: string;
  generationId: string | null;
  body: {
    messages: SeenMessage[];
    tools?: { function: { name: string } }[];
    temperature?: number;
    top_p?: number;
    max_tokens?: number;
    stream_options?: { include_usage?: boolean };
  };
}

/** The model calls whose prompt carried `marker`, oldest first. */
export async function requestsWith(marker: string): Promise<SeenRequest[]> {
  const { requests } = (await (await fetch(`${devModel}/__dev/requests`)).json()) as {
    requests: SeenRequest[];
  };
  return requests.filter((request) => JSON.stringify(request.body).includes(marker));
}

/** The text of a message's content, in any of the wire's forms (a string, text parts). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map(textOf).join("");
  if (typeof content === "object" && content !== null && "text" in content) {
    return String((content as { text: unknown }).text);
  }
  return "";
}

/** The system prompt a model call was given. */
export const systemOf = (request: SeenRequest | undefined): string =>
  textOf(request?.body.messages.find((message) => message.role === "system")?.content);

/** The tool names a model call offered. */
export const toolsOf = (request: SeenRequest | undefined): string[] =>
  (request?.body.tools ?? []).map((tool) => tool.function.name);

/** Sets the org's allowed models (as an admin; the org's chats hear of it). */
export async function allowModels(w: World, models: string[]): Promise<CatalogueModel[]> {
  const res = await api<{ items: CatalogueModel[] }>("PUT", `/api/orgs/${w.orgId}/models`, {
    token: w.admin.token,
    body: { models },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.items;
}

/** The member picks a session's model (null: back to the profile's). */
export async function pickModel(
  w: World,
  model: string | null,
  sessionId = w.sessionId,
): Promise<void> {
  const res = await api("PATCH", `/api/sessions/${sessionId}`, {
    token: w.member.token,
    body: { model },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}

/** Makes a profile through the API (as an admin); returns its id. */
export async function makeProfile(w: World, body: Record<string, unknown>): Promise<string> {
  const res = await api<{ id: string }>("POST", `/api/orgs/${w.orgId}/profiles`, {
    token: w.admin.token,
    body: { name: "Profile", ...body },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

/** Makes `profileId` the project's default (its members' and end users' sessions). */
export async function useForProject(w: World, profileId: string | null): Promise<void> {
  const res = await api("PATCH", `/api/projects/${w.projectId}`, {
    token: w.admin.token,
    body: { defaultProfileId: profileId },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
}
