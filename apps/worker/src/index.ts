import { app } from "./app.ts";
import { mailOutbox } from "./mail/outbox.ts";

export { AssistantAgent } from "./agents/assistant-agent.ts";
export { OnboardingAgent } from "./agents/onboarding-agent.ts";
export { BillingAccount } from "./billing/billing-account.ts";
export { ErasureJob } from "./erasure/erasure-job.ts";
export { DataExport } from "./exports/export-job.ts";
export { KnowledgeBase } from "./knowledge/knowledge-base.ts";
export { MailOutbox } from "./mail/mail-outbox.ts";
export { ToolSourceClient } from "./tools/source-client.ts";

/** The Worker entry: routes only, and the Durable Object classes it hosts. */
export default {
  fetch: app.fetch,
  /**
   * The cron (wrangler.jsonc): a backstop that asks the mail outbox to send anything still queued,
   * should a request's own `waitUntil` have been cut short before it asked.
   */
  async scheduled(_controller, env, ctx) {
    ctx.waitUntil(mailOutbox(env).kick());
  },
} satisfies ExportedHandler<Env>;
