import { messageOf } from "../../errors";
import type { Journal } from "../../journal/journal";
import { isUndoing, undoKey } from "../../journal/keys";
import type { CompensateConfig } from "../../types/compensate";
import type { ToolContext } from "../../types/context";
import type { ToolDef, Toolset, UndoCall } from "../../types/toolset";
import { undoArgs, undoArgsGiven } from "../compensate-config";
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
 * An instance whose tools say what undoes them (`compensate:`, toolsets/compensate-config.ts; or the
 * kind's code, a tool's `undo`).
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
    const configured = Object.hasOwn(this.config, name) ? this.config[name]! : undefined;
    const key = undoKey(ctx.callPath);
    if (isUndoing(ctx.callPath) || this.journal.get(key)) return value;
    const def = await this.def(name);
    if ((!configured && !def?.undo) || def?.failure?.(value)) return value;
    const recorded = configured
      ? this.undoOf(name, configured.tool, () => undoArgs(configured.args, args, value))
      : await this.codeUndo(name, def!, args, value);
    if (recorded) await this.journal.record<RecordedUndo>(key, recorded);
    return value;
  }

  /** The undo the worker file configured (`compensate:`), or why its arguments cannot be made. */
  private undoOf(name: string, tool: string, args: () => Record<string, unknown>): RecordedUndo {
    const recorded: RecordedUndo = { worker: this.worker, of: this.exposed(name), tool: this.exposed(tool) };
    try {
      recorded.args = args();
    } catch (err) {
      recorded.error = messageOf(err).slice(0, 300);
    }
    return recorded;
  }

  /** The undo the kind's code gives (`undo` of `defineToolset`'s tool): checked like a configured one; none when it says nothing needs undoing. */
  private async codeUndo(name: string, def: ToolDef, args: unknown, value: unknown): Promise<RecordedUndo | undefined> {
    let call: UndoCall | undefined;
    try {
      call = def.undo!(args, value);
    } catch (err) {
      return { worker: this.worker, of: this.exposed(name), tool: this.exposed(name), error: `its undo threw: ${messageOf(err).slice(0, 280)}` };
    }
    if (call === undefined) return undefined;
    const tool = String(call?.tool).slice(0, 128);
    const known = (await this.defsByName()).has(tool);
    return this.undoOf(name, tool, () => {
      if (!known) throw new Error(`its undo names "${tool}", no tool of the kind`);
      return undoArgsGiven(call.args);
    });
  }

  private async def(name: string): Promise<ToolDef | undefined> {
    return (await this.defsByName()).get(name);
  }

  private defsByName(): Promise<Map<string, ToolDef>> {
    this.defs ??= this.inner.listTools().then((list) => new Map(list.map((d) => [d.name, d])));
    return this.defs;
  }
}

/** Whether a kind's code says what undoes one of its tools (a tool's `undo`): its instances record undos without `compensate:`. */
export const kindUndoes = (kind: { readonly definitions: readonly ToolDef[] }): boolean => kind.definitions.some((d) => d.undo !== undefined);

export const compensable = (inner: Toolset, config: CompensateConfig, journal: Journal, worker: string, exposed: (tool: string) => string): Toolset =>
  new Compensable(inner, config, journal, worker, exposed);
