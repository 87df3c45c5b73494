import { catalog } from "../catalog";
import { describeCall } from "../engine/toolsets/describe-call";
import type { CallDescription } from "../engine/types/toolset";

/** The approval's call as its kind describes it, from the worker that asked (the last of the chain). */
export function describeApproval(a: { worker_chain: string[]; tool: string; args: unknown }): CallDescription | undefined {
  const worker = a.worker_chain.at(-1);
  return worker ? describeCall(catalog(), worker, a.tool, a.args) : undefined;
}
