import { ToolError } from "../errors";
import { files } from "../toolsets/kinds/files";
import { resolveFilePath } from "../toolsets/kinds/files-path";
import { callScopeId } from "../run/call-frame";
import type { CallFrame } from "../types/callable";
import type { FileLocation, WorkerFiles } from "../types/context";
import type { StateBackend } from "../types/state";

/** Where a run's files are: its id (a call scope's id starts with it) and its state backend. */
export interface RunFiles {
  readonly runId: string;
  readonly states: StateBackend;
}

/**
 * The files of the worker running in `frame`, in the same state its `files`
 * instances use (the scope's shared `~files` namespace), so a reference reaches
 * exactly what that worker's own `read_file` would — and nothing outside its roots.
 */
export function workerFiles(run: RunFiles, frame: CallFrame): WorkerFiles {
  // Made for every tool call's context and rarely used: the instances are looked up when a reference is.
  return { locate: (ref) => locate(run, frame, ref) };
}

function locate(run: RunFiles, frame: CallFrame, ref: string): FileLocation {
  const instances = Object.entries(frame.worker.toolsets).filter(([, spec]) => spec.use === files.kind);
  const configs = new Map(instances.map(([name, spec]) => [name, files.config.parse(spec.config) as { root: string; max_file_bytes: number }]));
  const at = resolveFilePath(
    ref,
    [...configs].map(([instance, c]) => ({ instance, root: c.root })),
    frame.worker.name,
  );
  const spec = frame.worker.toolsets[at.instance]!;
  const scope = spec.scope ?? files.scope;
  if (scope === "global")
    throw new ToolError(`"${ref}": files instance "${at.instance}" is global-scoped; attachments and downloads reach call- and run-scoped instances only`);
  const scopeId = scope === "call" ? callScopeId(run.runId, frame.path) : run.runId;
  return {
    ...at,
    disk: run.states.open(scope, scopeId, `~${files.kind}`),
    maxFileBytes: configs.get(at.instance)!.max_file_bytes,
    readonly: spec.readonly === true,
  };
}
