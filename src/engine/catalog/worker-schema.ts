import * as z from "zod";
import { deciderPolicySchema, frontmatterSchema } from "./worker-file";
import type { JSONSchema } from "../types/json-schema";
import { retrySchema } from "../toolsets/retry-config";
import { compensateSchema } from "../toolsets/compensate-config";
import type { ToolsetRegistry } from "../types/kind";
import { SLACK_TARGET } from "../slack/target";

const policy = z.enum(["allow", "ask", "deny"]);
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const fieldTest = z.union([
  scalar,
  z.array(scalar),
  z.strictObject({ eq: scalar, in: z.array(scalar), gt: z.number(), gte: z.number(), lt: z.number(), lte: z.number() }).partial(),
]);
const condition = z
  .record(z.string(), fieldTest)
  .describe("field path (a.b) → a value, a list of values (any), or {eq | in | gt | gte | lt | lte}; every field must match");
const when = z.union([condition, z.array(condition)]);
/** A tool's mapping in `approval:`: rules on the arguments (approvals/arg-rules.ts checks them) and who decides. */
const toolPolicy = deciderPolicySchema.extend({
  allow_initiator: deciderPolicySchema.shape.allow_initiator.describe("the person who started the run may decide its calls too (default false)"),
  editable: deciderPolicySchema.shape.editable.describe(
    "false: approve or reject the call as asked, no edit of its arguments and no answer in its place (default true)",
  ),
  ask_when: when.optional().describe("ask when the arguments match (one condition, or a list: any)"),
  deny_when: when.optional().describe("deny when the arguments match; checked before ask_when"),
  otherwise: policy.optional().describe("allow | ask | deny for calls no rule matches (required with rules)"),
});

/**
 * The JSON Schema of a `.worker` file's frontmatter, for editor completion: the
 * parsing schema, with `toolsets` spelled out per registered kind.
 */
export function workerFileJsonSchema(kinds: ToolsetRegistry): JSONSchema {
  const common = {
    scope: z.enum(["call", "run", "global"]).optional().describe("call (default): per worker call; run: per run; global: one for the app"),
    readonly: z.boolean().optional().describe("only the tools that change nothing"),
    retry: retrySchema.optional().describe("tries again after a timeout, 5xx or 429 (docs/reference.md)"),
    compensate: compensateSchema
      .optional()
      .describe("per tool, the call of another tool of this instance that undoes it when the run fails (docs/reference.md)"),
  };
  const instances = [...kinds.values()].map((kind) => {
    const config = kind.config instanceof z.ZodObject ? kind.config.shape : {};
    return z.strictObject({ use: z.literal(kind.kind).describe(kind.description), ...common, ...config });
  });
  const toolsets = z
    .object({
      workers: z
        .union([
          z.array(z.string()),
          z.strictObject({
            names: z.array(z.string()),
            run: z.enum(["inline", "child"]).optional().describe("child: each call runs as a child run of its own"),
          }),
        ])
        .optional()
        .describe("other workers (names or globs), each a tool named after it"),
    })
    .catchall(instances.length === 1 ? instances[0]! : z.union(instances as unknown as [z.ZodType, z.ZodType, ...z.ZodType[]]))
    .describe("instance name → toolset; an instance named like its kind exposes bare tool names, others are prefixed");
  const approval = z
    .object({
      notify: z
        .union([
          z.email(),
          z.strictObject({
            email: z.email().optional().describe("who gets the approval emails"),
            slack: z.string().regex(SLACK_TARGET).optional().describe("the Slack channel (#ops) or channel/user id the approvals are posted to"),
          }),
        ])
        .optional()
        .describe("who gets the approval emails, or {email, slack}"),
      remind_after: z.string().optional().describe("one reminder to the same approver after this long, e.g. 4h"),
      escalate_after: z.string().optional().describe("then the approval goes to escalate_to, e.g. 24h"),
      escalate_to: z.array(z.email()).optional().describe("who gets the escalated approval"),
    })
    .catchall(z.union([policy, toolPolicy]))
    .describe("exposed tool name → allow | ask | deny, or {ask_when, deny_when, otherwise, ask: [who may decide], allow_initiator, editable}");
  const f = frontmatterSchema.shape;
  // What each field means, for editors (kept here: the deployed bundle parses worker files without it).
  const described = {
    name: f.name.describe("unique; the tool name when other workers call this one"),
    description: f.description.describe("the tool description other workers' models see"),
    model: f.model.describe("else the caller's model, else DEFAULT_MODEL"),
    compatible_models: f.compatible_models.describe("instead of model: inherit, but only these (case-insensitive globs)"),
    input: f.input.describe("JSON Schema of the arguments (type: object); default {input: string}"),
    output: f.output.describe("JSON Schema the final answer must match"),
    max_turns: f.max_turns.describe("default 20"),
    budget: f.budget.describe("default run budget; a run request's fields win"),
    attachments: f.attachments.describe("accept files with each call; callers get an attachments parameter"),
    context: f.context.describe(
      "keep the history within the model's context: over max_tokens (estimated as characters / 4), an older stretch is summarized by model (default the worker's) or dropped (window), keeping the first message and the last keep_last (default 20); default {max_tokens: 64000, compact: window}",
    ),
  };
  const schema = frontmatterSchema.extend({ ...described, toolsets: toolsets.optional(), approval: approval.optional() });
  return {
    title: "edgework worker file frontmatter",
    ...(z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as JSONSchema),
  };
}
