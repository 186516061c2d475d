import { AppError } from "@parley/shared";
import { sha256Base64Url, toBase64Url } from "./encoding.ts";
import type { LiveToken } from "./middleware.ts";
import type { VerifiedAccessToken } from "./tokens.ts";

/**
 * WebSocket connect tickets. A browser cannot set headers on a WebSocket upgrade, and a bearer token
 * in the URL lands in request traces and logs. So a client asks for a ticket over authorized HTTP
 * and puts that in the upgrade URL instead: random, stored only as its SHA-256, good for one object,
 * for {@link CONNECT_TICKET_TTL_MS}, and for one upgrade. Whoever reads it in a log later holds
 * nothing.
 */

/** Long enough for a client on a slow link to open the socket, short enough to be worthless later. */
export const CONNECT_TICKET_TTL_MS = 30_000;

/** The object a ticket opens: the agent class's URL segment and the object's name. */
export interface TicketTarget {
  agent: string;
  name: string;
}

/** What a redeemed ticket stands for: the access token that asked for it. */
export type RedeemedTicket = LiveToken & { expiresAt: number };

export async function issueConnectTicket(
  db: D1Database,
  token: Pick<VerifiedAccessToken, "userId" | "familyId" | "version" | "expiresAt">,
  target: TicketTarget,
  now = Date.now(),
): Promise<{ ticket: string; expiresAt: number }> {
  const ticket = `ct_${toBase64Url(crypto.getRandomValues(new Uint8Array(32)))}`;
  const expiresAt = now + CONNECT_TICKET_TTL_MS;
  await db.batch([
    // Tickets nobody used are swept as new ones are issued (an index on the expiry keeps it cheap),
    // and so are registry rows a reset left behind, an hour after their token expired.
    db.prepare("DELETE FROM connect_tickets WHERE expires_at <= ?").bind(now),
    db.prepare("DELETE FROM agent_connections WHERE expires_at < ?").bind(now - 3_600_000),
    db
      .prepare(
        `INSERT INTO connect_tickets (ticket_hash, user_id, family_id, token_version, token_expires_at, agent, name, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(
        await sha256Base64Url(ticket),
        token.userId,
        token.familyId,
        token.version,
        token.expiresAt,
        target.agent,
        target.name,
        expiresAt,
      ),
  ]);
  return { ticket, expiresAt };
}

/**
 * Consumes a ticket for `target`: one statement deletes it and returns what it stood for, so two
 * upgrades racing with one ticket cannot both get it. Unknown, used, expired and other objects'
 * tickets are all the same `unauthorized`.
 */
export async function redeemConnectTicket(
  db: D1Database,
  ticket: string,
  target: TicketTarget,
  now = Date.now(),
): Promise<RedeemedTicket> {
  const refused = () => new AppError("unauthorized", "Invalid or expired connect ticket");
  if (!/^ct_[A-Za-z0-9_-]{43}$/.test(ticket)) throw refused();
  const row = await db
    .prepare(
      `DELETE FROM connect_tickets WHERE ticket_hash = ? AND expires_at > ?
       RETURNING user_id, family_id, token_version, token_expires_at, agent, name`,
    )
    .bind(await sha256Base64Url(ticket), now)
    .first<{
      user_id: string;
      family_id: string;
      token_version: number;
      token_expires_at: number;
      agent: string;
      name: string;
    }>();
  if (!row || row.agent !== target.agent || row.name !== target.name) throw refused();
  if (row.token_expires_at <= now) throw refused();
  return {
    userId: row.user_id,
    familyId: row.family_id,
    version: row.token_version,
    expiresAt: row.token_expires_at,
  };
}
