export * from "./agents.ts";
export * from "./apps.ts";
export * from "./billing.ts";
export * from "./errors.ts";
export * from "./ids.ts";
export * from "./json.ts";
export * from "./pagination.ts";
export * from "./schemas.ts";
