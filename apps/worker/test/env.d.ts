import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      /** The globalSetup's webhook recorder (see test/global-setup.ts). */
      TEST_MAILBOX_URL: string;
      /** The globalSetup's JWKS server (see test/global-setup.ts). */
      TEST_JWKS_URL: string;
      /** The tool servers (see test/tool-servers.ts). */
      TEST_TOOL_LAB_URL: string;
      TEST_TOOL_HTTP_URL: string;
      TEST_SHOP_URL: string;
      TEST_TOOL_V2_URL: string;
      TEST_TOOL_FLAKY_URL: string;
      TEST_TOOL_DOWN_URL: string;
    }
  }
}
