import type { Role } from "@parley/shared";
import type { VerifiedAccessToken } from "../auth/tokens.ts";

/** The caller, once the access token has been verified (and found still good). */
export type Caller = VerifiedAccessToken;

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
