import { ToolError } from "../errors";
import type { CallFrame } from "../call-frame";
import type { RunServices } from "../run";
import { confine, files } from "../toolsets/kinds/files";
import { callScopeId } from "../toolsets/scope-id";
import type { StateKV } from "../toolsets/toolset";

/** One file of one of a worker's `files` instances, confined under that instance's root. */
export interface FileLocation {
  instance: string;
  /** The canonical reference, `<instance>:/<path under its root>`. */
  ref: string;
  /** Absolute path under the instance's root. */
  path: string;
  disk: StateKV;
  maxFileBytes: number;
  readonly: boolean;
}

/**
 * A worker's own `files` instances, reachable by reference: `docs:/report.pdf` (the
 * path under that instance's root, as its tools see it: `/report.pdf` is `<root>/report.pdf`),
 * or a bare path as its `read_file` takes it, when it has exactly one files instance.
 */
export interface WorkerFiles {
  locate(ref: string): FileLocation;
}

const INSTANCE_REF = /^([a-zA-Z0-9_-]{1,64}):(.*)$/;

/**
 * The files of the worker running in `frame`, in the same state its `files`
 * instances use (the scope's shared `~files` namespace), so a reference reaches
 * exactly what that worker's own `read_file` would — and nothing outside its roots.
 */
export function workerFiles(run: RunServices, frame: CallFrame): WorkerFiles {
  // Made for every tool call's context and rarely used: the instances are looked up when a reference is.
  return { locate: (ref) => locate(run, frame, ref) };
}

function locate(run: RunServices, frame: CallFrame, ref: string): FileLocation {
  const instances = Object.entries(frame.worker.toolsets).filter(([, spec]) => spec.use === files.kind);
  const names = () => instances.map(([n]) => n).join(", ") || "(none)";
  const m = INSTANCE_REF.exec(ref);
  let entry = m ? instances.find(([n]) => n === m[1]) : undefined;
  // After an instance name the path is under that instance's root, whatever its leading slashes.
  let path = m && entry ? m[2]!.replace(/^\/+/, "") : ref;
  if (m && !entry) throw new ToolError(`"${ref}": ${frame.worker.name} has no files instance "${m[1]}"; its files instances: ${names()}`);
  if (!entry) {
    if (instances.length !== 1) throw new ToolError(`"${ref}": name the files instance, as in <instance>:${ref}; ${frame.worker.name}'s files instances: ${names()}`);
    entry = instances[0]!;
    path = ref;
  }
  const [instance, spec] = entry;
  const config = files.config.parse(spec.config) as { root: string; max_file_bytes: number };
  const scope = spec.scope ?? files.scope;
  if (scope === "global") throw new ToolError(`"${ref}": files instance "${instance}" is global-scoped; attachments and downloads reach call- and run-scoped instances only`);
  const scopeId = scope === "call" ? callScopeId(run.runId, frame.path) : run.runId;
  const abs = confine(config.root, path);
  return {
    instance,
    ref: `${instance}:${config.root === "/" ? abs : abs.slice(config.root.length)}`,
    path: abs,
    disk: run.states.open(scope, scopeId, `~${files.kind}`),
    maxFileBytes: config.max_file_bytes,
    readonly: spec.readonly === true,
  };
}
