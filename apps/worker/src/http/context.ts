import type { Role } from "@parley/shared";
import type { ApiKeyPrincipal } from "../auth/api-keys.ts";
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
    /** Set for a member's access token; unset when the request carries an API key instead. */
    caller: Caller;
    /**
     * The verified API key, on the routes that take keys (auth/api-keys.ts); there `caller` is
     * unset, and handlers find who is calling with `orgCaller`.
     */
    apiKey?: ApiKeyPrincipal;
  };
};
