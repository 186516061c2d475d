import { z } from "zod";

/** The chat agents a client may open, by the URL segment of `/agents/:agent/:name`. */
export const agentKindSchema = z.enum(["onboarding-agent", "assistant-agent"]);
export type AgentKind = z.infer<typeof agentKindSchema>;

/** `POST /api/connect-tickets`: a single-use ticket for one WebSocket upgrade of one agent object. */
export const connectTicketSchema = z.strictObject({
  agent: agentKindSchema,
  /** The project id (onboarding) or session id (assistant). */
  name: z.string().min(1).max(100),
});
export type ConnectTicketRequest = z.infer<typeof connectTicketSchema>;

export interface ConnectTicket {
  /** Goes in the upgrade URL as `?ticket=`; worthless after one use or when it expires. */
  ticket: string;
  expiresAt: string;
}
