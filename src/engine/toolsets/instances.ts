import { stableJson, shortHash } from "../ids";
import type { CallFrame } from "../loop";
import type { StateBackend } from "../ports";
import type { RunServices } from "../run";
import type { InstanceInit } from "./define";
import { combined } from "./combined";
import type { Scope, Toolset } from "./toolset";
import { workersToolset } from "./kinds/workers";
import { approvalGated } from "./wrappers/approval";
import { readOnly } from "./wrappers/filtered";
import { journaled } from "./wrappers/journaled";
import { journaledTools } from "./wrappers/journaled-tools";
import { prefixed } from "./wrappers/prefixed";
import type { InstanceSpec } from "../worker-file";
import type { z } from "zod";
import { RunError } from "../errors";
import { describeIssues } from "../json-schema";
import { interpolate, usesVars } from "./interpolate";

export function instanceInit(states: StateBackend, scope: Scope, scopeId: string, name: string, key: string): InstanceInit {
  return {
    name,
    state: states.open(scope, scopeId, key),
    shared: (namespace) => states.open(scope, scopeId, `~${namespace}`),
  };
}

/** The instance spec with `${VAR}`s resolved and the result checked again by the kind. */
function withVars(spec: InstanceSpec, schema: z.ZodType, vars: RunServices["vars"], where: { file: string; field: string }): InstanceSpec {
  if (!usesVars(spec.config)) return spec;
  const parsed = schema.safeParse(interpolate(spec.config, vars, where));
  if (!parsed.success) throw new RunError("config", `${where.file}: ${where.field}: after filling in variables: ${describeIssues(parsed.error)}`);
  return { ...spec, config: parsed.data as Record<string, unknown> };
}

/** Same name, kind and config → the same run- or global-scoped instance. */
const instanceKey = (name: string, spec: InstanceSpec) => `${name}:${spec.use}:${shortHash(stableJson(spec.config))}`;

/** The call-scope id: unique per run and call path, so nested and recursive calls never share. */
export const callScopeId = (runId: string, path: string) => `${runId}:${path}`;

/**
 * Builds the toolset one worker call sees: each instance from the cache its scope
 * names (fresh per call, the run's, or the global one), then
 * readonly → prefix → combined with worker tools → approval gate → journal.
 * The loop never branches on scope; it gets a toolset and a `close`.
 */
export async function buildCallToolset(run: RunServices, frame: CallFrame): Promise<{ toolset: Toolset; close(): Promise<void> }> {
  const owned: Array<{ name: string; ts: Toolset }> = [];
  const members: Array<[string, Toolset]> = [];
  try {
    for (const [name, declared] of Object.entries(frame.worker.toolsets)) {
      const kind = run.catalog.kinds.get(declared.use)!;
      // Keyed by the config as written: resolved secrets never become part of a key.
      const key = instanceKey(name, declared);
      const spec = withVars(declared, kind.config, run.vars, { file: frame.worker.file, field: `toolsets.${name}` });
      const scope = spec.scope ?? kind.scope;
      let ts: Toolset;
      if (scope === "call") {
        ts = await kind.instantiate(key, spec.config, instanceInit(run.states, "call", callScopeId(run.runId, frame.path), name, key));
        owned.push({ name, ts });
      } else if (scope === "run") {
        let p = run.runInstances.get(key);
        if (!p) run.runInstances.set(key, (p = kind.instantiate(key, spec.config, instanceInit(run.states, "run", run.runId, name, key))));
        ts = await p;
      } else {
        ts = await run.globals.resolve(key, name, kind, spec);
      }
      if (kind.dynamic) ts = journaledTools(ts, run.journal, `${frame.path}/tools:${name}`);
      if (spec.readonly) ts = readOnly(ts);
      members.push([`instance "${name}" (${kind.kind})`, name === kind.kind ? ts : prefixed(ts, name)]);
    }
  } catch (err) {
    await closeAll(run, owned);
    throw err;
  }
  if (frame.worker.workerTools.length) members.push(["toolsets.workers", workersToolset(run, frame)]);

  const gated = approvalGated(combined(frame.worker.name, members), {
    journal: run.journal,
    mode: run.approvalMode,
    policies: frame.worker.approval,
    workerChain: frame.chain,
    notify: frame.worker.notify,
    notifier: run.notifier,
    remembered: run.rememberedApprovals,
  });
  return { toolset: journaled(gated, run.journal), close: () => closeAll(run, owned) };
}

/** Closes in reverse order of creation; a failing close is logged and never hides the call's outcome. */
export async function closeAll(run: RunServices, owned: Array<{ name: string; ts: Toolset }>): Promise<void> {
  for (const { name, ts } of owned.reverse()) {
    try {
      await ts.close?.();
    } catch (err) {
      run.log.warn(`toolset instance "${name}" failed to close`, { run: run.runId, error: String(err) });
    }
  }
}
