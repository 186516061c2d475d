import type { ApiKey, App, EndUserWithUsage } from "@parley/shared";

/** An app as the API answers it (secret verification, one origin, one project). */
export const APP: App = {
  id: "app_01jexample0000000000000000",
  orgId: "org_1",
  name: "Acme Shop",
  allowedOrigins: ["https://shop.example.com"],
  projectIds: ["prj_1"],
  verification: {
    type: "secret",
    alg: "HS256",
    issuer: "https://shop.example.com",
    audience: "parley",
    maxTokenLifetimeSeconds: 600,
    secrets: [{ kid: "kid_1", createdAt: "2026-12-06T09:00:00.000Z", expiresAt: null }],
  },
  endUserDailyLimitMicros: 2_500_000,
  endUserWeeklyLimitMicros: null,
  endUserMonthlyLimitMicros: null,
  showCost: false,
  profileId: null,
  createdAt: "2026-12-06T09:00:00.000Z",
  updatedAt: "2026-12-06T09:00:00.000Z",
};

export const KEY: ApiKey = {
  id: "key_1",
  name: "Shop backend",
  prefix: "prly_sk_abcdefghijkl",
  scopes: ["end_users:token"],
  createdBy: "usr_1",
  createdAt: "2026-12-05T09:00:00.000Z",
  lastUsedAt: "2026-12-06T08:15:00.000Z",
  expiresAt: null,
  revokedAt: null,
};

export const END_USER: EndUserWithUsage = {
  id: "eu_1",
  appId: APP.id,
  externalId: "shop-user-ada",
  name: "Ada",
  createdAt: "2026-12-06T09:00:00.000Z",
  lastSeenAt: "2026-12-06T09:30:00.000Z",
  usage: { requests: 3, priceMicros: 1_234 },
};
