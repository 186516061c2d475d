import { app } from "./app.ts";

/** The Worker entry: routes only. Durable Object classes are re-exported here as they arrive. */
export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
