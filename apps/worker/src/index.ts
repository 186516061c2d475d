import { app } from "./app.ts";

export { AssistantAgent } from "./agents/assistant-agent.ts";
export { OnboardingAgent } from "./agents/onboarding-agent.ts";
export { BillingAccount } from "./billing/billing-account.ts";
export { ErasureJob } from "./erasure/erasure-job.ts";
export { DataExport } from "./exports/export-job.ts";
export { KnowledgeBase } from "./knowledge/knowledge-base.ts";
export { ToolSourceClient } from "./tools/source-client.ts";

/** The Worker entry: routes only, and the Durable Object classes it hosts. */
export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
