import { type ConnectTicket, connectTicketSchema, issuedConnectTicketSchema } from "@parley/shared";
import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { agentCaller } from "../agents/routing.ts";
import { issueConnectTicket } from "../auth/connect-tickets.ts";
import { iso } from "../db/pagination.ts";
import type { AppEnv } from "../http/context.ts";
import { errors, json } from "../http/openapi.ts";
import { jsonBody } from "../http/validate.ts";

/**
 * `POST /api/connect-tickets`: a single-use ticket for opening one agent's WebSocket (the browser
 * cannot send an Authorization header on an upgrade, and a token in the URL would be logged). It is
 * issued only to a caller who may open that object now; the upgrade checks again.
 */
export const connectTickets = new Hono<AppEnv>().post(
  "/",
  describeRoute({
    tags: ["Connect tickets"],
    summary: "A single-use ticket for an agent's WebSocket",
    responses: { 201: json(issuedConnectTicketSchema), ...errors(401, 404) },
  }),
  jsonBody(connectTicketSchema),
  async (c) => {
    const target = c.req.valid("json");
    const token = c.get("caller");
    await agentCaller(c.env.DB, token, target.agent, target.name);
    const issued = await issueConnectTicket(c.env.DB, token, target);
    c.header("cache-control", "no-store");
    return c.json(
      { ticket: issued.ticket, expiresAt: iso(issued.expiresAt) } satisfies ConnectTicket,
      201,
    );
  },
);
