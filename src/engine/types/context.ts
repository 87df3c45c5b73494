import type { HumanAnswer, HumanQuestion } from "./deciders";
import type { JSONSchema } from "./json-schema";
import type { StateKV } from "./state";
import type { UsageSink } from "./usage";
import type { ScheduledRef, ScheduleSpec } from "./schedule";
import type { ChildHandle } from "./children";
import type { EventWaitResult } from "./wait";

export interface AgentOptions {
  instructions: string;
  /** Same shape as a worker file's `toolsets` (instances only). */
  toolsets?: Record<string, { use: string; scope?: "call" | "run" | "global"; readonly?: boolean; [config: string]: unknown }>;
  input: unknown;
  model?: string;
  output?: JSONSchema;
  max_turns?: number;
}

/** One file of one of a worker's `files` instances, confined under that instance's root. */
export interface FileLocation {
  instance: string;
  /** The canonical reference, `<instance>:<absolute path>`. */
  ref: string;
  /** Absolute path under the instance's root. */
  path: string;
  disk: StateKV;
  maxFileBytes: number;
  readonly: boolean;
  /** What may be saved here of bytes of this type: set for a writer whose config holds secrets (`Redacted`), which must not land in a file. */
  cleaned?(bytes: Uint8Array, type: string): Uint8Array;
}

/**
 * A worker's own `files` instances, reachable by reference by the rule its `read_file`
 * follows (`resolveFilePath`): `docs:report.pdf` or `docs:/docs/report.pdf` for root
 * `/docs`, or a bare path when it has exactly one files instance.
 */
export interface WorkerFiles {
  locate(ref: string): FileLocation;
}

/** The effects a tool may have, each journaled (so replayed, never repeated) under its call's path. */
export interface ToolEffects {
  llmAsk(prompt: string, opts?: { model?: string; system?: string }): Promise<string>;
  llmAgent(opts: AgentOptions): Promise<unknown>;
  /** Any tool or worker tool the calling worker can see, by its exposed name. */
  callTool(name: string, args: unknown): Promise<unknown>;
  /** Any worker or function of the catalog, by name, one level deeper. */
  callWorker(name: string, input: unknown): Promise<unknown>;
  /** Memoizes a side effect under `key` (unique within this tool call). */
  step<T>(key: string, fn: () => T | Promise<T>): Promise<T>;
  now(): Promise<number>;
  randomId(): Promise<string>;
  /** Asks a person and pauses the run until they answer (or the question expires: `answered: false`). */
  askHuman(question: HumanQuestion): Promise<HumanAnswer>;
  /** Pauses this call durably for `duration` (ms, or text such as `20m`): the run holds one alarm, and replay never sleeps again. */
  sleep(duration: number | string, opts?: { reason?: string }): Promise<void>;
  /** Pauses this call durably until `time` (ms since the epoch, a Date or ISO 8601 text); a time past returns at the next activation. */
  sleepUntil(time: number | Date | string, opts?: { reason?: string }): Promise<void>;
  /**
   * Waits durably for the event `name`: delivered to this run (`POST /runs/:id/events/:name`) or
   * by a signal trigger under `key`; an event that came before the wait is taken first. Its
   * payload, or `timed_out` once `timeout` (ms, or text such as `2h`) has passed.
   */
  waitForEvent(name: string, opts: { timeout: number | string; key?: string; reason?: string }): Promise<EventWaitResult>;
  /**
   * Sets one of the run's attributes (`GET /runs?attr.<name>=<value>` finds it): a journal step, so a
   * replay changes nothing. A name is a-z 0-9 _ (32 at most); a value 1-256 characters (a number or a
   * boolean is kept as its text); at most 10 names per run, the start's included.
   */
  setAttribute(name: string, value: string | number | boolean): Promise<void>;
  /** Creates a schedule that starts runs until paused or deleted (`/schedules`): once per call, however often the run replays. */
  schedule(spec: ScheduleSpec): Promise<ScheduledRef>;
  /**
   * Starts `worker` as a child run of its own (its own object, its own journal) once per call,
   * however often the run replays. `result()` waits for its end durably: the parent's run is idle
   * meanwhile, and wakes when the child ends. The child carries this run's approval mode, budget
   * and depth; cancelling this run cancels it.
   */
  spawn(worker: string, input: unknown, opts?: { attributes?: Record<string, string | number | boolean> }): Promise<ChildHandle>;
  /** One child run of `worker` per input, at most `concurrency` at once (default 10, at most 50): their outputs, in input order. */
  map(worker: string, inputs: readonly unknown[], opts?: { concurrency?: number; attributes?: Record<string, string | number | boolean> }): Promise<unknown[]>;
}

/**
 * What every tool implementation receives: where the call is, a usage sink, the
 * instance's state, the worker's files, and the effect methods. Each effect method is
 * journaled under `<callPath>/<kind>:<n>` (journal/keys.ts), `n` counting this
 * context's effects in call order, so a deterministic tool replays onto the same keys.
 * Copy one with `contextWith` (run/context-with.ts), not a spread: the engine's contexts keep
 * `idempotencyKey` and the methods as getters on their prototype (each made when first read).
 */
export interface ToolContext extends ToolEffects {
  readonly runId: string;
  readonly callPath: string;
  /** Stable for this tool call across replays (run id + call path); for `Idempotency-Key` headers. */
  readonly idempotencyKey: string;
  /** 1 for the run's worker, +1 per nested worker. */
  readonly depth: number;
  readonly workerChain: readonly string[];
  /** This tool call's usage; nested model calls add here and roll up to the run. */
  readonly usage: UsageSink;
  /** Durable KV of this toolset instance's scope. */
  readonly state: StateKV;
  /** The calling worker's own `files` instances by reference (`docs:/a.png`): where http's `save_to` writes. Absent for global instances. */
  readonly files?: WorkerFiles;
}
