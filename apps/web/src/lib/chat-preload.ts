import type { UIMessage } from "ai";
import { api } from "./api.ts";

type Agent = "onboarding-agent" | "assistant-agent";

interface Preloaded {
  ticket: Promise<string> | null;
  messages: Promise<UIMessage[]> | null;
  at: number;
}

/** A connect ticket lives 30 s on the server; one older than this is not handed out. */
const TICKET_FRESH_MS = 20_000;
/** A transcript read this long ago may miss a reply: the chat reads it again. */
const MESSAGES_FRESH_MS = 5_000;
const preloaded = new Map<string, Preloaded>();
const keyOf = (agent: Agent, name: string) => `${agent}/${name}`;
const quiet = <T>(promise: Promise<T>): Promise<T> => {
  promise.catch(() => undefined);
  return promise;
};

/** The transcript of a chat, as the chat reads it (`get-messages`, with the bearer token). */
export const fetchMessages = (agent: Agent, name: string): Promise<UIMessage[]> =>
  api.get<UIMessage[]>(`/agents/${agent}/${encodeURIComponent(name)}/get-messages`);

/**
 * Starts what opening a chat needs, its connect ticket and its transcript, as soon as the route
 * is known (the route's loader), so they load alongside the page's script instead of after it.
 * The chat takes them once (`takeTicket`, `takeMessages`) and fetches its own from then on.
 */
export function preloadChat(agent: Agent, name: string): void {
  const key = keyOf(agent, name);
  const current = preloaded.get(key);
  if (current && Date.now() - current.at < MESSAGES_FRESH_MS) return;
  // Signed out (no token, no refresh cookie): nothing to start; the app sends them to sign in.
  if (!api.hasToken() && !api.mayHaveSession()) return;
  const entry: Preloaded = {
    ticket: quiet(api.connectTicket(agent, name)),
    messages: quiet(fetchMessages(agent, name)),
    at: Date.now(),
  };
  // A failed start is never handed out (it failed for a reason that may be gone, e.g. signed
  // out then): the chat asks again itself.
  const drop = () => {
    if (preloaded.get(key) === entry) preloaded.delete(key);
  };
  entry.ticket?.catch(drop);
  entry.messages?.catch(drop);
  preloaded.set(key, entry);
}

/**
 * Settles once what `preloadChat` started for this chat has arrived (or failed), without taking
 * it; at once when nothing is waiting.
 */
export async function preloadSettled(agent: Agent, name: string): Promise<void> {
  const entry = preloaded.get(keyOf(agent, name));
  if (entry) await Promise.allSettled([entry.ticket, entry.messages]);
}

function take<K extends "ticket" | "messages">(
  agent: Agent,
  name: string,
  part: K,
  freshMs: number,
): Preloaded[K] {
  const entry = preloaded.get(keyOf(agent, name));
  if (!entry) return null;
  const value = entry[part];
  entry[part] = null;
  if (entry.ticket === null && entry.messages === null) preloaded.delete(keyOf(agent, name));
  return Date.now() - entry.at < freshMs ? value : null;
}

/** The preloaded connect ticket, once (a ticket opens one socket), while it is still good. */
export const takeTicket = (agent: Agent, name: string): Promise<string> | null =>
  take(agent, name, "ticket", TICKET_FRESH_MS);

/** The preloaded transcript, once, while it is fresh. */
export const takeMessages = (agent: Agent, name: string): Promise<UIMessage[]> | null =>
  take(agent, name, "messages", MESSAGES_FRESH_MS);
