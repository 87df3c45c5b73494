import { JournalKeyTaken, messageOf, nondeterministic, RunError, StorageError } from "../errors";
import { fitsStep, MAX_STEP_BYTES, utf8Bytes } from "./bounds";
import { decisionCallOf, EFFECT_METHOD, forEachEffectSlot, keyWriter, parentPath, parseKey, within, type EffectKind } from "./keys";
import type { JournalStore } from "../types/journal";

/** May throw (e.g. `RunInterrupted`) to stop the run before a new step executes. */
export type BeforeStep = (key: string, journal: Journal) => void | Promise<void>;

/**
 * What to record instead of a value that is over `MAX_STEP_BYTES` (`bytes` as JSON):
 * a smaller value, or a throw. Only called for an oversized value, so the common
 * case costs one JSON text per step.
 */
export type Oversized<T> = (value: T, bytes: number) => T;

/**
 * The run's memory of every effect that is not pure. `step(key, fn)` returns the
 * recorded value when the key is in the journal (replay), else runs `fn`, records
 * its result and returns it. Keys are deterministic call paths, so a replayed run
 * asks for the same keys in the same places.
 */
export class Journal {
  private readonly inFlight = new Set<string>();
  private settledOne?: () => void;
  /**
   * The first write that failed. Every later step and write throws it again, so a
   * tool that catches the error (around `ctx.step`, say) cannot carry the run on
   * past an effect the journal does not hold.
   */
  private failure?: Error;
  /** Steps executed (not replayed) in this activation. */
  executed = 0;
  /** Each recorded key's place in the order steps were recorded (made when first asked: `ordinal`). */
  private ordinals?: Map<string, number>;
  /** The kind recorded in each ctx effect slot, by call path and n (made when first asked: `checkSlot`). */
  private slots?: Map<string, EffectKind>;
  /** The calls a person's decision changed in this activation (edited, or answered in their place): `changedByPerson`. */
  private changed?: Set<string>;
  /** Succeeded effect steps by kind (`succeededEffects`), once asked for. */
  private succeeded?: Map<string, number>;

  private constructor(
    private readonly recorded: Map<string, unknown>,
    private readonly store: JournalStore,
    private readonly beforeStep?: BeforeStep,
  ) {}

  /** `beforeStep` runs before each step that is about to execute (not on replay). */
  static async open(store: JournalStore, beforeStep?: BeforeStep): Promise<Journal> {
    return new Journal(await store.load(), store, beforeStep);
  }

  /** Steps recorded so far. */
  get size(): number {
    return this.recorded.size;
  }

  entries(): IterableIterator<[string, unknown]> {
    return this.recorded.entries();
  }

  get<T>(key: string): T | undefined {
    return this.recorded.get(key) as T | undefined;
  }

  /**
   * The approval gate applied a person's edit or answer to `call` (from its recorded decision,
   * on every replay too): what the model reads of it says so. In memory: a mark, not a step.
   */
  noteChangedByPerson(call: string): void {
    if (this.changedByPerson(call)) return;
    this.changed!.add(call);
  }

  /**
   * Whether a person's decision changed `call`: noted by the gate in this activation, or recorded
   * before it (a replayed call's result comes from the journal, past the gate). The recorded ones
   * are read once per activation, when first asked: no tool call pays a key lookup for it.
   */
  changedByPerson(call: string): boolean {
    if (!this.changed) {
      this.changed = new Set();
      for (const [k, v] of this.recorded) {
        const decided = decisionCallOf(k);
        if (decided !== undefined && changesTheCall(v)) this.changed.add(decided);
      }
    }
    return this.changed.has(call);
  }

  /** Whether a step under `key` is executing now (not yet recorded). */
  executing(key: string): boolean {
    return this.inFlight.has(key);
  }

  /** Whether the step under `key` was copied from a fork's source (JournalStore `inherited`). */
  inherited(key: string): boolean {
    return this.store.inherited?.(key) ?? false;
  }

  /**
   * Where `key` stands in the order steps were recorded (the store's order: the order
   * they completed), or undefined while it is not recorded. Replay hands a context's
   * recorded results back in this order (run/delivery-order.ts).
   */
  ordinal(key: string): number | undefined {
    if (!this.ordinals) {
      let n = 0;
      this.ordinals = new Map();
      for (const k of this.recorded.keys()) this.ordinals.set(k, n++);
    }
    return this.ordinals.get(key);
  }

  /**
   * Fails the run when the context at `call` asks for its effect `n` as `kind` and the
   * journal holds that slot as another kind: its calls are numbered otherwise than when
   * they were recorded, and every later result would go to the wrong call.
   */
  checkSlot(call: string, n: number, kind: EffectKind, key: string): void {
    if (!this.slots) {
      this.slots = new Map();
      for (const k of this.recorded.keys()) this.addSlots(k);
    }
    const recorded = this.slots.get(`${call}\u0000${n}`);
    if (recorded !== undefined && recorded !== kind) throw nondeterministic(key, `a ctx.${EFFECT_METHOD[recorded]} call`, `a ctx.${EFFECT_METHOD[kind]} call`);
  }

  private addSlots(key: string): void {
    forEachEffectSlot(key, (call, n, kind) => this.slots!.set(`${call}\u0000${n}`, kind));
  }

  async step<T>(key: string, fn: () => T | Promise<T>, oversized?: Oversized<T>): Promise<T> {
    if (this.recorded.has(key)) return this.recorded.get(key) as T;
    // Two live steps with one key would record one effect for two: an engine bug.
    if (this.inFlight.has(key)) throw new Error(`journal key used twice: ${key}`);
    if (this.failure) throw this.failure;
    this.inFlight.add(key);
    try {
      if (this.beforeStep) await this.beforeStep(key, this);
      // The run's clock (in Workers it moves on at I/O: a model request or a fetch is timed, pure CPU reads as 0).
      const startedAt = Date.now();
      const value = await fn();
      const written = this.write(key, value, oversized, startedAt);
      if (written) await written;
      this.executed++;
      return this.recorded.get(key) as T;
    } finally {
      this.inFlight.delete(key);
      this.settledOne?.();
    }
  }

  /**
   * The host's check before an effect that `step` does not run (a retry's next attempt,
   * inside its call's step): a cancel, a checkpoint or a test fault stops the activation there.
   */
  async beforeEffect(key: string): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.beforeStep) await this.beforeStep(key, this);
  }

  /**
   * Resolves once no step is executing but `key` and the steps it runs inside (a
   * worker call's `<path>/result` while its nested steps run): for a fault injected
   * "between steps" that must not cut a parallel step's effect from its record.
   */
  async othersSettled(key: string): Promise<void> {
    const outside = (k: string, up = parentPath(k)) => k !== key && up !== undefined && !within(key, up);
    const busy = () => [...this.inFlight].some((k) => outside(k));
    while (busy()) await new Promise<void>((r) => (this.settledOne = r));
  }

  /**
   * Writes one step and returns what was written. A value over `MAX_STEP_BYTES` is
   * never attempted: `oversized` may give a smaller one (tool results are cut to fit),
   * else it fails the run. A store failure becomes a `StorageError`, never a tool result.
   */
  async record<T>(key: string, value: T, oversized?: Oversized<T>): Promise<T> {
    const written = this.write(key, value, oversized);
    if (written) await written;
    return this.recorded.get(key) as T;
  }

  /**
   * `record` without a promise when the store writes synchronously (SQLite, memory):
   * the recorded value is in `recorded` when this returns, or when its promise resolves.
   */
  private write<T>(key: string, value: T, oversized?: Oversized<T>, startedAt?: number): Promise<void> | undefined {
    if (this.failure) throw this.failure;
    // Made once: checked here, written as is by a store that writes text.
    let json = JSON.stringify(value ?? null);
    if (!fitsStep(key, json) && oversized) {
      value = oversized(value, utf8Bytes(key) + utf8Bytes(json));
      json = JSON.stringify(value ?? null);
    }
    if (!fitsStep(key, json)) {
      throw (this.failure = new RunError(
        "too_large",
        `journal step ${key} is ${utf8Bytes(key) + utf8Bytes(json)} bytes as JSON, over the bound of ${MAX_STEP_BYTES} bytes per step; return less from this step (keep large data out of ctx.step values)`,
        true,
      ));
    }
    let put: void | Promise<void>;
    try {
      put = this.store.put(key, value, json, startedAt);
    } catch (err) {
      this.kept(key, this.taken(key, err));
      return undefined;
    }
    if (!put) {
      this.kept(key, value);
      return undefined;
    }
    return put.then(
      () => this.kept(key, value),
      (err: unknown) => this.kept(key, this.taken(key, err)),
    );
  }

  /** `value` is recorded under `key` (by this write, or by the first writer of a key both sides may write). */
  private kept(key: string, value: unknown): void {
    this.recorded.set(key, value);
    this.ordinals?.set(key, this.ordinals.size);
    if (this.slots) this.addSlots(key);
    if (this.succeeded) this.countSucceeded(key, value);
  }

  /**
   * How many `effect` steps succeeded (their recorded value says `ok`): the spawns that started a child,
   * the schedules made. Counted once, then kept up to date: a fan-out of many spawns reads no journal per spawn.
   */
  succeededEffects(effect: EffectKind): number {
    if (!this.succeeded) {
      this.succeeded = new Map();
      for (const [key, value] of this.recorded) this.countSucceeded(key, value);
    }
    return this.succeeded.get(effect) ?? 0;
  }

  private countSucceeded(key: string, value: unknown): void {
    const k = parseKey(key);
    if (k.kind === "effect" && (value as { ok?: unknown } | null)?.ok) this.succeeded!.set(k.effect, (this.succeeded!.get(k.effect) ?? 0) + 1);
  }

  /**
   * What a refused write leaves under `key`: a decision the host recorded first (a person
   * decided while this activation waited) is the decision; anything else is a failure.
   */
  private taken(key: string, err: unknown): unknown {
    if (err instanceof JournalKeyTaken && keyWriter(key) === "either") return err.value;
    throw this.failed(key, err);
  }

  /** A store failure, kept: every later step and write throws it again. A key written twice is an engine bug: no retry helps. */
  private failed(key: string, err: unknown): Error {
    return (this.failure =
      err instanceof StorageError
        ? err
        : new StorageError(`the journal could not record step ${key}: ${messageOf(err)}`, err instanceof JournalKeyTaken, { cause: err }));
  }
}

/** A decision that edited the call's arguments or answered in its place (approvals/ask-approval.ts `ApprovalDecision`). */
function changesTheCall(v: unknown): boolean {
  if (typeof v !== "object" || v === null) return false;
  const d = v as { args?: unknown; response?: unknown };
  return d.args !== undefined || typeof d.response === "string";
}
