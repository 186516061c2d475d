import { AppError, MAX_MEMORY_BYTES, type Memory, memoryBytes, memorySchema } from "@parley/shared";
import { tool, zodSchema } from "ai";
import { z } from "zod";
import { projectAccess } from "../../auth/access.ts";
import { billingAccount } from "../../billing/account.ts";
import { auditStatement } from "../../db/audit.ts";
import type { AgentCaller } from "../caller.ts";

// Built once per isolate: a schema object converts itself to JSON Schema once and keeps the result,
// where a zod schema written inline in a tool would be converted again on every model call.
const noInput = zodSchema(z.strictObject({}));
const memoryChange = zodSchema(
  z.strictObject({
    set: memorySchema.optional().describe("Keys to set, with their new JSON values"),
    remove: z.array(z.string().min(1).max(100)).max(50).optional().describe("Keys to remove"),
  }),
);

/**
 * The assistant's tools. Identity is injected here, from the caller the Worker verified and the
 * session this object is: no tool takes a project, org or member id from the model, so a model asked
 * to reach another org has nothing to aim with. Inputs are strict: unknown arguments are refused.
 */
export function assistantTools(
  env: Cloudflare.Env,
  caller: AgentCaller,
  hooks: { memoryChanged(): Promise<unknown> },
) {
  const projectId = caller.projectId;
  return {
    read_project_memory: tool({
      description:
        "Read the shared memory of this project (a small JSON object all members share).",
      inputSchema: noInput,
      execute: async () => {
        const { project } = await projectAccess(env.DB, caller.userId, projectId);
        return { memory: JSON.parse(project.memory) as Memory };
      },
    }),
    update_project_memory: tool({
      description:
        "Set or remove keys in this project's shared memory. The member must approve the change before it is written.",
      inputSchema: memoryChange,
      // Human in the loop: the SDK asks the member, and runs execute only after an approval.
      needsApproval: true,
      execute: async ({ set, remove }) => {
        // Rights are checked when the write happens, not when the model asked.
        const { project } = await projectAccess(env.DB, caller.userId, projectId);
        const memory = { ...(JSON.parse(project.memory) as Memory), ...set };
        for (const key of remove ?? []) delete memory[key];
        if (memoryBytes(memory) > MAX_MEMORY_BYTES) {
          throw new AppError(
            "payload_too_large",
            `The memory would exceed ${MAX_MEMORY_BYTES} bytes`,
          );
        }
        const now = Date.now();
        await env.DB.batch([
          env.DB.prepare(
            "UPDATE projects SET memory = ?, updated_at = ? WHERE id = ? AND deleted_at IS NULL",
          ).bind(JSON.stringify(memory), now, projectId),
          auditStatement(
            env.DB,
            {
              orgId: caller.orgId,
              actorId: caller.userId,
              action: "project.memory_updated_by_assistant",
              subjectType: "project",
              subjectId: projectId,
              data: { sessionId: caller.sessionId },
            },
            { now, afterChange: true },
          ),
        ]);
        await hooks.memoryChanged();
        return { memory };
      },
    }),
    get_balance: tool({
      description:
        "Look up the organization's prepaid credit balance, in micro-dollars (1 USD = 1,000,000).",
      inputSchema: noInput,
      execute: async () => {
        const { availableMicros, heldMicros } = await billingAccount(env, caller.orgId).balance();
        return { availableMicros, heldMicros };
      },
    }),
    get_session_spend: tool({
      description: "Look up what this assistant session has cost so far, in micro-dollars.",
      inputSchema: noInput,
      execute: async () => billingAccount(env, caller.orgId).sessionSpend(caller.sessionId ?? ""),
    }),
  };
}
