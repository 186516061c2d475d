import type { Role } from "@parley/shared";

/** The caller, once the access token has been verified. */
export interface Caller {
  userId: string;
  tokenId: string;
}

/** The caller's membership in the organization a route is about, once checked. */
export interface OrgAccess {
  orgId: string;
  role: Role;
}

export type AppEnv = {
  Bindings: Env;
  Variables: {
    caller: Caller;
  };
};
