import type { Catalog } from "../../src/engine";
import type { KeyGrammar } from "../../src/engine/journal/keys";
import type { RunRow } from "../rows";
import type { Sql } from "../sql";
import type { Io } from "./io";

/**
 * What the collaborators of one run (approvals.ts, mail.ts, index-sync.ts, controls.ts,
 * view.ts, the model dispatch) need from the run's object, RunDO. Each takes the part it uses
 * (`Pick<RunHost, …>`); none of it is an RPC method of the object.
 */
export interface RunHost {
  readonly ctx: DurableObjectState;
  readonly env: Env;
  /** The object's SQLite (schema.ts). */
  readonly sql: Sql;
  /** Records a run event: its row in `events`, then what `noted` does. */
  event(type: string, data: Record<string, unknown>): void;
  /** A fact another row already records (e.g. a journal step): its log line and index report, no row. */
  noted(type: string, data: Record<string, unknown>): void;
  /** A wake-up requested now: the next activation comes at once (lifecycle.ts `wake`). */
  wakeSoon(): Promise<void>;
  /** A wake-up requested for `at`: the alarm comes no later (lifecycle.ts `wake`). */
  wake(at: number): Promise<void>;
  /** The run's next deadline: its alarm, never later than a wake-up requested (lifecycle.ts `arm`). */
  arm(at: number): Promise<void>;
  /** Every await that lets other requests in goes through here (io.ts). */
  io: Io;
  /** The time waits are measured by (RunDO's clock seam). */
  now(): number;
  /** When "now" is for a wake-up a request asks for (RunDO's seam: the test pool's is a minute ahead). */
  soon(): number;
  /** The catalog of the activation in progress (the run's pinned one), if any. */
  activeCatalog(): Catalog | undefined;
  /** The run as it stands (RUN_CURRENT in schema.ts); undefined for an unknown or deleted run. */
  row(): RunRow | undefined;
  /** How the run's journal keys are written (schema.ts keyGrammarOf). */
  keyGrammar(): KeyGrammar;
}
