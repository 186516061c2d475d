import type { IncomingMessage, ServerResponse } from "node:http";
import type { JWTPayload, JWTVerifyGetKey } from "jose";

export declare const PARLEY_TOOL_TOKEN_TYPE: "parley-tool+jwt";

export interface Order {
  id: string;
  status: string;
  total: string;
  carrier: string;
  refund: { status: string; reason: string; at: string } | null;
}

export declare function parleyVerifier(options: {
  keys: JWTVerifyGetKey;
  issuer: string;
  audience: string;
  /** The tenant's own Parley org id (`org_...`): a token of another org is refused. */
  org: string;
}): (authorization: string | undefined) => Promise<JWTPayload>;

export declare function parleyKeys(parleyUrl: string): JWTVerifyGetKey;

export declare function shopOrders(seed?: Record<string, Order[]>): {
  of(shopper: string): Order[];
};

export declare function shopMcpHandler(options: {
  verify: (authorization: string | undefined) => Promise<JWTPayload>;
  orders: ReturnType<typeof shopOrders>;
  onCall?: (claims: JWTPayload, body: unknown) => void;
}): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
