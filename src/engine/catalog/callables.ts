import { withAttachmentsParameter } from "../attachments/parameter";
import type { ToolDef } from "../types/toolset";
import type { Callable } from "../types/callable";

/**
 * How a callable appears as a tool to a worker that lists it: exactly what the calling
 * model is offered (an `attachments` parameter for a worker that takes them), and what
 * `GET /workers` shows.
 */
export function callableTool(c: Pick<Callable, "name" | "description" | "input" | "attachments" | "approvalHooks">): ToolDef {
  const def: ToolDef = {
    name: c.name,
    description: c.description,
    parameters: c.input,
    readOnly: false,
    // The callee's own tools do the gating (or a function's needsApproval); `approval: {callee: ask}` overrides this.
    approval: () => (c.approvalHooks?.needsApproval ? "ask" : "allow"),
    ...c.approvalHooks,
  };
  return withAttachmentsParameter(def, c);
}
