import type { CreatedWorkers } from "./created-workers";
import type { Journal } from "../journal/journal";
import type { KeyGrammar } from "../journal/keys";
import type { Substitution } from "../toolsets/interpolate";
import type { ApprovalHost } from "../approvals/ask-approval";
import type { WaitRecorder } from "../waits/wait";
import type { ApprovalMode } from "../toolsets/wrappers/approval";
import type { Budget } from "../types/budget";
import type { Callables } from "../types/callable";
import type { Catalog } from "../types/catalog";
import type { ModelResolver } from "../types/model";
import type { Clock, GlobalToolsets, Logger } from "../types/ports";
import type { StateBackend } from "../types/state";
import type { Toolset } from "../types/toolset";
import type { PriceTable } from "../types/usage";
import type { UsageMeter } from "./usage";
import type { Connections } from "../net/connection-slots";
import type { Attributes } from "../attributes";
import type { Schedules } from "../types/schedule";
import type { Children } from "../types/children";

/** Everything one run's worker calls share during one activation. */
export interface RunServices {
  runId: string;
  catalog: Catalog;
  /** Workers and functions by name: the one way the engine calls anything. */
  callables: Callables;
  /** Workers this run created (`worker_creation`), rebuilt from the journal at each activation. */
  created: CreatedWorkers;
  models: ModelResolver;
  journal: Journal;
  /** How this run's journal keys are written (journal/keys.ts). */
  keyGrammar: KeyGrammar;
  states: StateBackend;
  globals: GlobalToolsets;
  /** Run-scoped instances of this activation, by instance key. */
  runInstances: Map<string, Promise<Toolset>>;
  clock: Clock;
  log: Logger;
  maxDepth: number;
  prices: PriceTable;
  defaultModel: string;
  /** The run's limits: the request's over the root worker's `budget:`. */
  budget: Budget;
  approvalMode: ApprovalMode;
  /** Records a pending approval, then tells a human (the host's; either may be absent). */
  approvals: ApprovalHost;
  /** Records a pending timer or event wait (the host's; absent: nothing can end one but its own deadline). */
  recordWait?: WaitRecorder;
  /** The attributes the run started with. */
  attributes: Attributes;
  /** Where `ctx.schedule` creates schedules (the host's). */
  schedules?: Schedules;
  /** Where child runs are started (the host's); absent: they are refused. */
  children?: Children;
  /** Calls approved "for the rest of the run", from the journal at activation start. */
  rememberedApprovals: ReadonlySet<string>;
  vars: Readonly<Record<string, string | undefined>>;
  /** The secrets among values filled into a config (what its instance must redact). */
  secretsOf: (filled: readonly Substitution[]) => Substitution[];
  usage: UsageMeter;
  /** Where this activation's requests take their turn for one of the invocation's connections (net/connection-slots.ts). */
  connections: Connections;
}
