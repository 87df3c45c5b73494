import { DurableObject } from "cloudflare:workers";
import { messageOf, RunInterrupted, ToolError, type Toolset } from "../src/engine";
import { instanceInit } from "../src/engine/toolsets/instances";
import { ConnectionSlots } from "../src/engine/net/connection-slots";
import { UsageMeter } from "../src/engine/run/usage";
import { deployedKinds } from "../src/catalog";
import type { Bridged, GlobalCall, GlobalResult, ToolContextBridge } from "./global-toolsets-bridge";
import { migrateGlobal } from "./schema";
import { Sql } from "./sql";
import { SqliteStateBackend } from "./sqlite-state";

/**
 * The singleton (`idFromName("global")`) holding every `scope: global` toolset
 * instance, shared by all runs. Instances live for this object's activation;
 * their state lives in its SQLite.
 */
export class GlobalToolsetsDO extends DurableObject<Env> {
  private readonly sql: Sql;
  private readonly states: SqliteStateBackend;
  private readonly instances = new Map<string, Promise<Toolset>>();
  /**
   * One line of connections for every instance here: an instance outlives the call that
   * made it, so its requests cannot take turns by invocation; sharing six is never more than one allows.
   */
  private readonly connections = new ConnectionSlots();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = new Sql(ctx.storage.sql);
    migrateGlobal(this.sql);
    this.states = new SqliteStateBackend(this.sql);
  }

  async callTool(call: GlobalCall, bridge: ToolContextBridge): Promise<GlobalResult> {
    const kind = deployedKinds().get(call.kind);
    if (!kind) return { ok: false, error: `unknown toolset kind "${call.kind}" in the global toolsets` };
    let ts = this.instances.get(call.key);
    if (!ts) {
      ts = kind.instantiate(call.key, call.config, instanceInit(this.states, "global", "global", call.name, call.key, this.connections));
      this.instances.set(call.key, ts);
      ts.catch(() => this.instances.delete(call.key));
    }
    try {
      const value = await (await ts).callTool(call.tool, call.args, {
        ...call.ctx,
        usage: new UsageMeter(),
        state: this.states.open("global", "global", call.key),
        llmAsk: (prompt, opts) => unbridged(bridge.llmAsk(prompt, opts)),
        llmAgent: (opts) => unbridged(bridge.llmAgent(opts)),
        callTool: (name, args) => unbridged(bridge.callTool(name, args)),
        callWorker: (name, input) => unbridged(bridge.callWorker(name, input)),
        step: (key, fn) => unbridged(bridge.step(key, async () => fn())) as Promise<never>,
        now: () => unbridged(bridge.now()),
        randomId: () => unbridged(bridge.randomId()),
        askHuman: (q) => unbridged(bridge.askHuman(q)),
        // A durable wait pauses a run: an instance shared by every run has none to pause.
        sleep: () => notGlobal("sleep"),
        sleepUntil: () => notGlobal("sleepUntil"),
        waitForEvent: () => notGlobal("waitForEvent"),
        // A run's attributes and schedules are the run's own: set them from a tool of scope call or run.
        setAttribute: () => notGlobal("setAttribute", "it sets the attributes of one run"),
        schedule: () => notGlobal("schedule", "it acts for one run"),
        // A child run waits durably for its end: only a run can.
        spawn: () => notGlobal("spawn", "a child run is waited for by one run"),
        map: () => notGlobal("map", "a child run is waited for by one run"),
      });
      return { ok: true, value: value ?? null };
    } catch (err) {
      return { ok: false, error: messageOf(err) };
    }
  }
}

/** What a global instance's durable wait does: refuse, naming where waiting works. */
const notGlobal = (method: string, why = "a durable wait pauses a run"): Promise<never> =>
  Promise.reject(new ToolError(`ctx.${method} is not available to a global toolset instance: ${why} (use scope: call or run)`));

/**
 * A bridged call's value; a signal met on the run's side is raised here as an
 * interruption, which the tool's SignalBoundary keeps from the tool and turns into
 * this call's end (the run's side then throws the real signal).
 */
async function unbridged<T>(answer: Promise<Bridged<T>>): Promise<T> {
  const a = await answer;
  if ("signalled" in a) throw new RunInterrupted("fault", "a signal of the calling run");
  return a.value;
}
