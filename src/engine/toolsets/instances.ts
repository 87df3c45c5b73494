import { stableJson, shortHash } from "../ids";
import { combined } from "./combined";
import { callScopeId } from "../run/call-frame";
import { workersToolset } from "./kinds/workers";
import { toolsKey } from "../journal/keys";
import { approvalGated, type ApprovalMode } from "./wrappers/approval";
import { readOnly } from "./wrappers/filtered";
import { journaled } from "./wrappers/journaled";
import { journaledTools } from "./wrappers/journaled-tools";
import { prefixed } from "./wrappers/prefixed";
import { retrying } from "./wrappers/retrying";
import { compensable, kindUndoes } from "./wrappers/compensable";
import { showsCreated } from "./wrappers/shows-created";
import { redacted, redactError } from "./wrappers/redacted";
import { redactor } from "./redactor";
import type { z } from "zod";
import { RunError } from "../errors";
import { describeIssues } from "../json-schema";
import { interpolate, usesVars, type Substitution } from "./interpolate";
import type { CallFrame } from "../types/callable";
import type { InstanceInit, ToolsetKind } from "../types/kind";
import type { Toolset } from "../types/toolset";
import type { InstanceSpec } from "../types/worker";
import type { Scope, StateBackend } from "../types/state";
import type { ApprovalHost } from "../approvals/ask-approval";
import type { AttachmentSources } from "../attachments/resolve";
import type { Journal } from "../journal/journal";
import type { CreatedWorkers } from "../run/created-workers";
import type { Catalog } from "../types/catalog";
import type { Callables } from "../types/callable";
import type { Clock, GlobalToolsets, Logger } from "../types/ports";
import { ConnectionSlots, type Connections } from "../net/connection-slots";

/**
 * What building a call's toolset uses of its run (run/executor.ts hands it the run's
 * services, the same object for every call). Most of the run, because a call's toolset is where the run's
 * instances, secrets, approval gate, journal and created workers meet; not the model,
 * budget or usage.
 */
export interface ToolsetServices extends AttachmentSources {
  /** When a retried call's next try is due (wrappers/retrying.ts). */
  readonly clock: Clock;
  readonly catalog: Catalog;
  /** What `toolsets.workers` and created workers resolve to. */
  readonly callables: Callables;
  readonly journal: Journal;
  readonly created: CreatedWorkers;
  /** Run-scoped instances of this activation, by instance key. */
  readonly runInstances: Map<string, Promise<Toolset>>;
  readonly globals: GlobalToolsets;
  readonly approvalMode: ApprovalMode;
  readonly approvals: ApprovalHost;
  /** Calls approved "for the rest of the run". */
  readonly rememberedApprovals: ReadonlySet<string>;
  readonly log: Logger;
}

/** A call's toolset and what closes the instances made for that call alone. */
export interface CallToolset {
  toolset: Toolset;
  close(): Promise<void>;
}

/** Owned instances, closed in reverse order of creation. */
type Owned = Array<{ name: string; ts: Toolset }>;

/** `connections`: the line its requests wait in (the activation's; a global instance's, its object's). */
export function instanceInit(
  states: StateBackend,
  scope: Scope,
  scopeId: string,
  name: string,
  key: string,
  connections: Connections = new ConnectionSlots(),
): InstanceInit {
  return {
    name,
    state: states.open(scope, scopeId, key),
    shared: (namespace) => states.open(scope, scopeId, `~${namespace}`),
    connections,
  };
}

/**
 * The instance spec with `${VAR}`s resolved and the result checked again by the kind,
 * and the secrets among the values filled in (to redact; plain vars stay readable).
 * The kind's complaint may quote a value: it is redacted too, since the error is stored with the run.
 */
function withVars(
  spec: InstanceSpec,
  schema: z.ZodType,
  run: AttachmentSources,
  where: { file: string; field: string },
): { spec: InstanceSpec; secrets: Substitution[] } {
  if (!usesVars(spec.config)) return { spec, secrets: [] };
  const { config, substituted } = interpolate(spec.config, run.vars, where);
  const secrets = run.secretsOf(substituted);
  const parsed = schema.safeParse(config);
  if (!parsed.success) {
    throw new RunError("config", redactor(secrets)(`${where.file}: ${where.field}: after filling in variables: ${describeIssues(parsed.error)}`));
  }
  return { spec: { ...spec, config: parsed.data as Record<string, unknown> }, secrets };
}

/** Same name, kind and config → the same run- or global-scoped instance. */
const instanceKey = (name: string, spec: InstanceSpec) => `${name}:${spec.use}:${configHash(spec.config)}`;

/** A catalog's configs are parsed once and never changed: each is hashed once, not for every call of its worker. */
const configHashes = new WeakMap<object, string>();
function configHash(config: InstanceSpec["config"]): string {
  if (config === null || typeof config !== "object") return shortHash(stableJson(config));
  let hash = configHashes.get(config);
  if (hash === undefined) configHashes.set(config, (hash = shortHash(stableJson(config))));
  return hash;
}

/**
 * Builds the toolset one worker call sees: each instance from the cache its scope
 * names (fresh per call, the run's, or the global one), then
 * redaction → retry, compensation (if configured) → readonly → prefix → combined with worker tools → approval gate → journal.
 * The loop never branches on scope; it gets a toolset and a `close`.
 */
export async function buildCallToolset(run: ToolsetServices, frame: CallFrame): Promise<CallToolset> {
  const owned: Owned = [];
  const members: Array<[string, Toolset]> = [];
  const creationTools = new Set<string>();
  try {
    for (const [name, declared] of Object.entries(frame.worker.toolsets)) {
      const kind = run.catalog.kinds.get(declared.use)!;
      if (kind.framed) {
        let ts = kind.framed({ frame, catalog: run.catalog, callables: run.callables, journal: run.journal, created: run.created }, name, declared.config);
        if (declared.readonly) ts = readOnly(ts);
        for (const def of kind.definitions) creationTools.add(name === kind.kind ? def.name : `${name}_${def.name}`);
        members.push([`instance "${name}" (${kind.kind})`, name === kind.kind ? ts : prefixed(ts, name)]);
        continue;
      }
      // Keyed by the config as written: resolved secrets never become part of a key.
      const key = instanceKey(name, declared);
      const { spec, secrets } = withVars(declared, kind.config, run, { file: frame.worker.file, field: `toolsets.${name}` });
      let ts = await scopedInstance(run, frame, { name, key, kind, spec, secrets }, owned).catch((err) => {
        throw redactError(err, redactor(secrets));
      });
      if (kind.dynamic) ts = journaledTools(ts, run.journal, toolsKey(frame.path, name));
      if (spec.retry) ts = retrying(ts, spec.retry, run.journal, run.clock);
      if (spec.compensate || kindUndoes(kind))
        ts = compensable(ts, spec.compensate ?? {}, run.journal, frame.worker.name, (tool) => (name === kind.kind ? tool : `${name}_${tool}`));
      if (spec.readonly) ts = readOnly(ts);
      members.push([`instance "${name}" (${kind.kind})`, name === kind.kind ? ts : prefixed(ts, name)]);
    }
  } catch (err) {
    await closeAll(run, owned);
    throw err;
  }
  if (frame.worker.workerTools.length) members.push(["toolsets.workers", workersToolset(run, frame)]);
  if (creationTools.size) members.push(["created workers", workersToolset(run, frame, () => run.created.shownTo(frame.path), "created workers")]);

  const gated = approvalGated(combined(frame.worker.name, members), {
    journal: run.journal,
    mode: run.approvalMode,
    policies: frame.worker.approval,
    workerChain: frame.chain,
    notify: frame.worker.notify,
    deciders: frame.worker.deciders,
    host: run.approvals,
    remembered: run.rememberedApprovals,
  });
  const toolset = journaled(gated, run.journal);
  return {
    toolset: creationTools.size ? showsCreated(toolset, { journal: run.journal, created: run.created, path: frame.path, tools: creationTools }) : toolset,
    close: () => closeAll(run, owned),
  };
}

/**
 * The instance one worker call uses, from the cache its scope names: fresh per call
 * (added to `owned`, closed when the call ends), the run's, or the global one. Every
 * scope's instance is seen through `redacted`, so no resolved secret comes back out.
 */
async function scopedInstance(
  run: ToolsetServices,
  frame: CallFrame,
  i: { name: string; key: string; kind: ToolsetKind; spec: InstanceSpec; secrets: Substitution[] },
  owned: Owned,
): Promise<Toolset> {
  const make = async (scope: Scope, scopeId: string) =>
    redacted(await i.kind.instantiate(i.key, i.spec.config, instanceInit(run.states, scope, scopeId, i.name, i.key, run.connections)), i.secrets);
  const scope = i.spec.scope ?? i.kind.scope;
  if (scope === "call") {
    const ts = await make("call", callScopeId(run.runId, frame.path));
    owned.push({ name: i.name, ts });
    return ts;
  }
  if (scope === "run") {
    let p = run.runInstances.get(i.key);
    if (!p) run.runInstances.set(i.key, (p = make("run", run.runId)));
    return p;
  }
  return redacted(await run.globals.resolve(i.key, i.name, i.kind, i.spec), i.secrets);
}

/** Closes in reverse order of creation; a failing close is logged and never hides the call's outcome. */
export async function closeAll(run: Pick<ToolsetServices, "runId" | "log">, owned: Owned): Promise<void> {
  for (const { name, ts } of owned.reverse()) {
    try {
      await ts.close?.();
    } catch (err) {
      run.log.warn(`toolset instance "${name}" failed to close`, { run: run.runId, error: String(err) });
    }
  }
}
