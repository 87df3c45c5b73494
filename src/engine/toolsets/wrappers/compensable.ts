import { messageOf } from "../../errors";
import type { Journal } from "../../journal/journal";
import { isUndoing, undoKey } from "../../journal/keys";
import type { CompensateConfig } from "../../types/compensate";
import type { ToolContext } from "../../types/context";
import type { ToolDef, Toolset } from "../../types/toolset";
import { undoArgs } from "../compensate-config";
import { WrapperToolset } from "./wrapper";

/**
 * What a made effect's undo is, as recorded under `<call>/undo`: the tool to call (as the
 * worker's toolset names it) on behalf of which worker, with which arguments — or why it
 * cannot be made (`error`: a path into the call named nothing).
 */
export interface RecordedUndo {
  worker: string;
  /** The tool that made the effect, as the worker's toolset names it. */
  of: string;
  tool: string;
  args?: Record<string, unknown>;
  error?: string;
}

/**
 * An instance whose tools say what undoes them (`compensate:`, toolsets/compensate-config.ts).
 * After a call that succeeded (its tool's `failure(result)` says nothing: for http, an answer
 * under 400) and is not itself an undo, its undo is
 * journaled beside its result, inside the call's one `<call>/result` step, so a replay never
 * records it again; run/compensate.ts makes the undos in reverse order when the run fails.
 */
export class Compensable extends WrapperToolset {
  private defs: Promise<Map<string, ToolDef>> | undefined;

  constructor(
    inner: Toolset,
    private readonly config: CompensateConfig,
    private readonly journal: Journal,
    /** The worker whose toolset this instance is part of, and how that toolset names a tool of it. */
    private readonly worker: string,
    private readonly exposed: (tool: string) => string,
  ) {
    super(inner);
  }

  override async callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const value = await this.inner.callTool(name, args, ctx);
    const undo = Object.hasOwn(this.config, name) ? this.config[name]! : undefined;
    const key = undoKey(ctx.callPath);
    if (undo && !isUndoing(ctx.callPath) && !this.journal.get(key) && !(await this.def(name))?.failure?.(value)) {
      const recorded: RecordedUndo = { worker: this.worker, of: this.exposed(name), tool: this.exposed(undo.tool) };
      try {
        recorded.args = undoArgs(undo.args, args, value);
      } catch (err) {
        recorded.error = messageOf(err).slice(0, 300);
      }
      await this.journal.record<RecordedUndo>(key, recorded);
    }
    return value;
  }

  private async def(name: string): Promise<ToolDef | undefined> {
    this.defs ??= this.inner.listTools().then((list) => new Map(list.map((d) => [d.name, d])));
    return (await this.defs).get(name);
  }
}

export const compensable = (inner: Toolset, config: CompensateConfig, journal: Journal, worker: string, exposed: (tool: string) => string): Toolset =>
  new Compensable(inner, config, journal, worker, exposed);
