import { RpcTarget } from "cloudflare:workers";
import {
  combinedSignal,
  messageOf,
  propagates,
  ToolError,
  type AgentOptions,
  type GlobalToolsets,
  type HumanQuestion,
  type ToolContext,
  type Toolset,
} from "../src/engine";

/** What a global tool call sends to the singleton: plain data. */
export interface GlobalCall {
  key: string;
  name: string;
  kind: string;
  config: Record<string, unknown>;
  tool: string;
  args: unknown;
  ctx: Pick<ToolContext, "runId" | "callPath" | "idempotencyKey" | "depth" | "workerChain">;
}

export type GlobalResult = { ok: true; value: unknown } | { ok: false; error: string };

/** A bridged ctx call's answer: its value, or word that it met a signal (kept on the run's side). */
export type Bridged<T> = { value: T } | { signalled: true };

/**
 * The calling run's ToolContext, reachable from GlobalToolsetsDO by RPC: a global
 * tool's llmAsk, callTool, step… run in the caller's run and journal. Signals
 * (approval, checkpoint) cannot cross RPC as themselves: they are kept here (combined,
 * as a SignalBoundary does) and rethrown on the run's side; the singleton only hears
 * that one was met, so the tool's own boundary there stops the tool.
 */
export class ToolContextBridge extends RpcTarget {
  signal: unknown;

  constructor(private readonly ctx: ToolContext) {
    super();
  }

  private async guard<T>(fn: () => Promise<T>): Promise<Bridged<T>> {
    try {
      return { value: await fn() };
    } catch (err) {
      if (!propagates(err)) throw new Error(messageOf(err));
      this.signal = combinedSignal(this.signal, err);
      return { signalled: true };
    }
  }

  llmAsk(prompt: string, opts?: { model?: string; system?: string }) {
    return this.guard(() => this.ctx.llmAsk(prompt, opts));
  }
  llmAgent(opts: AgentOptions) {
    return this.guard(() => this.ctx.llmAgent(opts));
  }
  callTool(name: string, args: unknown) {
    return this.guard(() => this.ctx.callTool(name, args));
  }
  callWorker(name: string, input: unknown) {
    return this.guard(() => this.ctx.callWorker(name, input));
  }
  step(key: string, fn: () => Promise<unknown>) {
    return this.guard(() => this.ctx.step(key, () => fn()));
  }
  now() {
    return this.guard(() => this.ctx.now());
  }
  randomId() {
    return this.guard(() => this.ctx.randomId());
  }
  askHuman(q: HumanQuestion) {
    return this.guard(() => this.ctx.askHuman(q));
  }
}

export interface GlobalToolsetsStub {
  callTool(call: GlobalCall, bridge: ToolContextBridge): Promise<GlobalResult>;
}

/** `scope: global` instances as proxies to the singleton GlobalToolsetsDO. */
export function rpcGlobals(stub: () => GlobalToolsetsStub): GlobalToolsets {
  return {
    async resolve(key, name, kind, spec): Promise<Toolset> {
      return {
        id: key,
        listTools: async () => kind.definitions,
        async callTool(tool, args, ctx) {
          const bridge = new ToolContextBridge(ctx);
          const { runId, callPath, idempotencyKey, depth, workerChain } = ctx;
          const result = await stub().callTool(
            { key, name, kind: kind.kind, config: spec.config, tool, args, ctx: { runId, callPath, idempotencyKey, depth, workerChain: [...workerChain] } },
            bridge,
          );
          if (bridge.signal) throw bridge.signal;
          if (!result.ok) throw new ToolError(result.error);
          return result.value;
        },
      };
    },
  };
}
