import * as z from "zod";
import { globMatcher } from "../../glob";
import { exposedToolNames } from "../../catalog/catalog";
import { createdFile, readCreation, type RecordedCreation } from "../../run/created-workers";
import { creationKey } from "../../journal/keys";
import { ToolError } from "../../errors";
import { describeIssues, toolParameters } from "../../json-schema";
import type { FramedCall } from "../../types/kind";
import { schemaBoundsProblem } from "../../schema-bounds";
import { isMapping, TOOL_NAME } from "../../catalog/worker-file";
import type { ToolsetKind } from "../../types/kind";
import type { DeciderPolicy } from "../../types/deciders";
import type { ToolPolicy } from "../../types/arg-rules";
import type { ToolDef, Toolset } from "../../types/toolset";
import type { InstanceSpec, WorkerSpec } from "../../types/worker";

const KIND = "worker_creation";

const config = z.strictObject({
  grant: z
    .array(z.string().regex(TOOL_NAME, "instance names follow the tool-name rule"))
    .max(20)
    .default([])
    .describe("instances of this worker a created worker may be given"),
  max_workers: z.number().int().min(1).max(20).default(3).describe("workers this instance may create per run"),
});
type Config = z.output<typeof config>;

/**
 * A JSON Schema from the model. No `pattern`: the validator would build a regex from
 * it, and a model's regex can backtrack for minutes on the arguments it is checked
 * against. Its size, depth and `$ref` expansion are bounded in `checkedCreation`
 * (`SCHEMA_BOUNDS`), which names the worker.
 */
const schema = z
  .record(z.string(), z.unknown())
  .refine((s) => shallowAndRegexFree(s, 0), "must not use pattern or patternProperties, nor nest deeper than 32 levels");

/** Keywords whose value maps names to schemas: the names are data, only the schemas are checked. */
const SCHEMA_MAPS = new Set(["properties", "$defs", "definitions", "dependentSchemas"]);

function shallowAndRegexFree(v: unknown, depth: number): boolean {
  if (typeof v !== "object" || v === null) return true;
  if (depth > 32) return false;
  if (Array.isArray(v)) return v.every((x) => shallowAndRegexFree(x, depth + 1));
  // The keywords whatever their type: zod turns an array `pattern` or a boolean-valued
  // `patternProperties` into a RegExp too. (A property merely named `pattern` is fine.)
  const o = v as Record<string, unknown>;
  if ("pattern" in o || "patternProperties" in o) return false;
  return Object.entries(o).every(([k, x]) =>
    SCHEMA_MAPS.has(k) && isMapping(x) ? Object.values(x).every((schema) => shallowAndRegexFree(schema, depth + 2)) : shallowAndRegexFree(x, depth + 1),
  );
}

const createArgs = z.strictObject({
  name: z.string().describe("the new worker's name and tool name: 1-64 of a-z A-Z 0-9 _ -"),
  description: z.string().min(1).max(2_000).describe("what the new worker does, as its callers' models read it"),
  instructions: z.string().min(1).max(50_000).describe("the new worker's instructions (its system prompt)"),
  toolsets: z.array(z.string()).max(20).optional().describe("granted toolset instances to give it, by name"),
  input: schema.optional().describe("JSON Schema (type: object) of its arguments; default {input: string}"),
  output: schema.optional().describe("JSON Schema its final answer must match"),
  model: z.string().max(200).optional().describe('"provider:model"; default the caller\'s'),
});
type CreateArgs = z.output<typeof createArgs>;

const definition: ToolDef = {
  name: "worker_create",
  description:
    "Create a worker (an agent with its own instructions) for this run. From your next turn on it is a tool named after it. " +
    "It may use only the toolsets you give it from those granted to you.",
  parameters: toolParameters(createArgs),
  readOnly: false,
  // Writing an agent is a decision for a person unless the worker file says `allow`.
  approval: () => "ask",
  describe: (args) => {
    const a = createArgs.safeParse(args);
    return a.success
      ? { summary: `create worker "${a.data.name}" with toolsets ${a.data.toolsets?.join(", ") || "(none)"}`, details: a.data.instructions }
      : undefined;
  },
};

/**
 * `worker_creation`: one tool, `worker_create`, that defines a worker for the rest of
 * the run. The definition is read and checked as a `.worker` file; its toolsets are
 * copies of the creator's own granted instances (never config from the model), and
 * its approval policies are the creator's for those tools. Built per call, because it
 * needs the creator's frame.
 */
export const workerCreation: ToolsetKind = {
  kind: KIND,
  description: "Lets a worker create workers for its run, with a subset of its own toolsets",
  scope: "call",
  config,
  definitions: [definition],
  instantiate: () => Promise.reject(new Error(`kind "${KIND}" is built for each call (framed)`)),
  checkInstance(worker, instance, cfg) {
    return (cfg as Config).grant.flatMap((g) => {
      const granted = worker.toolsets[g];
      if (!granted)
        return [
          {
            field: "grant",
            reason: `"${g}" is not a toolset instance of ${worker.name}; a created worker gets only its creator's instances (have: ${
              Object.keys(worker.toolsets)
                .filter((n) => n !== instance)
                .join(", ") || "none"
            })`,
          },
        ];
      if (granted.use === KIND) return [{ field: "grant", reason: `"${g}" creates workers itself and cannot be granted` }];
      return [];
    });
  },
  framed: (call, instance, cfg) => creationToolset(call, instance, cfg as Config),
};

function creationToolset(call: FramedCall, instance: string, cfg: Config): Toolset {
  const { frame } = call;
  return {
    id: `${frame.path}#${instance}`,
    listTools: async () => [definition],
    async callTool(name, args, ctx) {
      if (name !== definition.name) throw new ToolError(`toolset "${instance}" has no tool "${name}"`);
      // Recorded, then interrupted before its result was: the worker exists (the run knows it from the journal).
      const done = call.journal.get<RecordedCreation>(creationKey(ctx.callPath));
      if (done) return createdMessage(String(done.frontmatter.name));
      const parsed = createArgs.safeParse(args);
      if (!parsed.success) throw new ToolError(`invalid arguments for ${name}: ${describeIssues(parsed.error)}`);
      const creation = checkedCreation(call, instance, cfg, parsed.data);
      const worker = readCreation(creation, createdFile(parsed.data.name, frame.worker.file), call.catalog.kinds);
      if (Array.isArray(worker)) throw new ToolError(`the worker definition was refused: ${worker.join("; ")}`);
      // Taken before anything is awaited: a second creation in the same turn sees the name and the count.
      call.created.add({ worker, creation });
      await call.journal.step(creationKey(ctx.callPath), () => creation);
      return createdMessage(worker.name);
    },
  };
}

const createdMessage = (name: string) => `created worker "${name}": from your next turn on it is a tool named ${name}`;

/** The definition as a worker file's fields, once the grant, the count and the name allow it. */
function checkedCreation(call: FramedCall, instance: string, cfg: Config, a: CreateArgs): RecordedCreation {
  const { frame } = call;
  const creator = frame.worker;
  const toolsets = [...new Set(a.toolsets ?? [])];
  const refused = toolsets.filter((t) => !cfg.grant.includes(t));
  if (refused.length) {
    throw new ToolError(`toolsets ${refused.map((t) => `"${t}"`).join(", ")} are not granted by "${instance}"; it grants: ${cfg.grant.join(", ") || "(none)"}`);
  }
  // Never another model than the creator may use: the same one, or one its compatible_models admit.
  if (a.model !== undefined && a.model !== frame.model && !creator.compatibleModels?.some((g) => globMatcher(g, { ignoreCase: true })(a.model!))) {
    throw new ToolError(
      `model "${a.model}" is not one ${creator.name} may use (its model is ${frame.model}${creator.compatibleModels ? `; compatible_models: ${creator.compatibleModels.join(", ")}` : ""}); leave model out to use the same`,
    );
  }
  for (const [field, s] of [
    ["input", a.input],
    ["output", a.output],
  ] as const) {
    const problem = s && schemaBoundsProblem(s);
    if (problem) throw new ToolError(`the ${field} schema of worker "${a.name}" ${problem}; write a smaller one`);
  }
  const grant = `${creator.file}#${instance}`;
  if (call.created.countOf(grant) >= cfg.max_workers) throw new ToolError(`"${instance}" has created its max_workers (${cfg.max_workers}) for this run`);
  const taken = call.callables.get(a.name);
  if (taken) throw new ToolError(`the name "${a.name}" is taken by ${taken.file}; choose another`);
  if (ownToolNames(call, creator).has(a.name)) throw new ToolError(`the name "${a.name}" is a tool of ${creator.name} already; choose another`);

  const approval: Record<string, unknown> = {};
  for (const [tool, policy] of Object.entries(creator.approval)) {
    if (toolsets.some((t) => ownsTool(call, t, creator.toolsets[t]!, tool))) approval[tool] = asWrittenPolicy(policy, creator.deciders?.[tool]);
  }
  if (creator.notify) approval.notify = creator.notify;
  const frontmatter: Record<string, unknown> = {
    name: a.name,
    description: a.description,
    // The creator's model unless it picked one it may use: a created worker never inherits a wider choice.
    model: a.model ?? frame.model,
    ...(a.input ? { input: a.input } : {}),
    ...(a.output ? { output: a.output } : {}),
    toolsets: Object.fromEntries(toolsets.map((t) => [t, asWritten(creator.toolsets[t]!)])),
    ...(Object.keys(approval).length ? { approval } : {}),
  };
  return { frontmatter, instructions: a.instructions, creator: frame.path, by: creator.file, grant };
}

/** A tool's policy as a worker file writes it: its rules (normalized rules read back the same), who decides and whether a call may be changed, so none is lost. */
function asWrittenPolicy(policy: ToolPolicy, who: DeciderPolicy | undefined): unknown {
  if (!who) return policy;
  return {
    ...(typeof policy === "string" ? {} : policy),
    ...(who.ask ? { ask: who.ask } : {}),
    ...(who.allowInitiator ? { allow_initiator: true } : {}),
    ...(who.editable === false ? { editable: false } : {}),
  };
}

/** Tool names the creator exposes (static ones): a created worker's tool must not shadow one. */
function ownToolNames(call: FramedCall, w: WorkerSpec & { workerTools: string[] }): Set<string> {
  const callees = w.workerTools.flatMap((n) => call.catalog.get(n) ?? []);
  return new Set(exposedToolNames(w, callees, call.catalog.kinds).keys());
}

/** Is `tool` (an exposed name) one of instance `name`'s tools? */
function ownsTool(call: FramedCall, name: string, spec: InstanceSpec, tool: string): boolean {
  const kind = call.catalog.kinds.get(spec.use)!;
  if (name !== kind.kind) return tool.startsWith(`${name}_`);
  return kind.dynamic === true || kind.definitions.some((d) => d.name === tool);
}

/** An instance as a worker file writes it: `${VAR}`s unresolved, so no secret enters the definition. */
const asWritten = (spec: InstanceSpec) => ({
  use: spec.use,
  ...(spec.scope ? { scope: spec.scope } : {}),
  ...(spec.readonly ? { readonly: true } : {}),
  ...spec.config,
});
