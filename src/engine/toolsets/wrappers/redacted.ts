import type { ToolContext } from "../../types/context";
import { contextWith } from "../../run/context-with";
import { messageOf, propagates, RunError, ToolError } from "../../errors";
import { withoutSecrets } from "../../attachments/without-secrets";
import type { WorkerFiles } from "../../types/context";
import type { Substitution } from "../interpolate";
import { MIN_REDACTED_LENGTH, redactor } from "../redactor";
import type { ToolDef, Toolset } from "../../types/toolset";
import { WrapperToolset } from "./wrapper";

/** Every string in a JSON-like value, keys too; other objects as the journal would store them (JSON). */
function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === "string") return redact(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return redactDeep(JSON.parse(JSON.stringify(value)), redact);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [redact(k), redactDeep(v, redact)]));
}

/** The error with its text redacted; engine signals (approval, interruption, storage) carry none of the instance's text and pass unchanged. */
export function redactError(err: unknown, redact: (text: string) => string): unknown {
  if (err instanceof RunError) return new RunError(err.code, redact(err.message), err.fatal);
  if (propagates(err)) return err;
  // What kind of failure it was holds no secret: a retry policy still reads it.
  return new ToolError(redact(messageOf(err)), err instanceof ToolError && err.failure ? { failure: err.failure } : undefined);
}

/**
 * The `${NAME}` values an instance's config was filled with never come back out of
 * it: its tool list (descriptions, schemas, a listing error), results (every string,
 * deep), errors, the values it memoizes with `ctx.step`, the files it saves (`save_to`),
 * the questions it asks and the reasons it waits for (`ctx.askHuman`, `ctx.sleep`…) and
 * errors of `close()` are redacted before the journal, the model, a file, a person or a log sees them.
 */
export class Redacted extends WrapperToolset {
  private readonly redact: (text: string) => string;

  constructor(
    inner: Toolset,
    private readonly secrets: readonly Substitution[],
  ) {
    super(inner);
    this.redact = redactor(secrets);
  }

  // A dynamic kind's list (an MCP server's descriptions, or its error) is upstream text too.
  override async listTools(): Promise<ToolDef[]> {
    const redact = this.redact;
    try {
      return (await this.inner.listTools()).map((d) => ({
        ...d,
        description: redact(d.description),
        parameters: redactDeep(d.parameters, redact) as typeof d.parameters,
      }));
    } catch (err) {
      throw redactError(err, redact);
    }
  }

  override async callTool(name: string, args: unknown, ctx: ToolContext): Promise<unknown> {
    const redact = this.redact;
    // Redacted before it is recorded, so the first run and every replay see the same value.
    // A value and an error alike: both are recorded (a step's error is its outcome too).
    const step: ToolContext["step"] = (key, fn) =>
      ctx.step(key, async () => {
        try {
          return redactDeep(await fn(), redact) as Awaited<ReturnType<typeof fn>>;
        } catch (err) {
          throw redactError(err, redact);
        }
      });
    try {
      const files = ctx.files && savedWithoutSecrets(ctx.files, this.secrets);
      const waits = effectsWithoutSecrets(ctx, name, this.secrets, redact);
      return redactDeep(await this.inner.callTool(name, args, contextWith(ctx, { step, files, ...waits })), redact);
    } catch (err) {
      throw redactError(err, redact);
    }
  }

  override async close(): Promise<void> {
    try {
      await this.inner.close?.();
    } catch (err) {
      // No `cause`: the original text is what redaction keeps from the log.
      throw new Error(this.redact(messageOf(err)));
    }
  }
}

/** `inner` seen through `Redacted`, or `inner` itself when no secret is long enough to redact. */
export function redacted(inner: Toolset, secrets: readonly Substitution[]): Toolset {
  return secrets.some((s) => s.value.length >= MIN_REDACTED_LENGTH) ? new Redacted(inner, secrets) : inner;
}

/** A worker's files as an instance with secrets writes them (http's `save_to`): text redacted, bytes holding a secret refused. */
function savedWithoutSecrets(files: WorkerFiles, secrets: readonly Substitution[]): WorkerFiles {
  return {
    locate(ref) {
      const at = files.locate(ref);
      const refusal = (vars: string) => `nothing saved to ${at.path}: the response holds the value of ${vars}, a secret this http instance sends`;
      return { ...at, cleaned: (bytes, type) => withoutSecrets(bytes, type, secrets, refusal) };
    },
  };
}

type WaitEffects = Pick<ToolContext, "askHuman" | "sleep" | "sleepUntil" | "waitForEvent">;

/**
 * The effects whose text reaches people (approvals, emails, pages, `GET /runs/:id`), with
 * the instance's secrets out of it: a question and a wait's reason redacted; a
 * waitForEvent key holding a secret refused, since a redacted key would never match the signal.
 */
function effectsWithoutSecrets(ctx: ToolContext, tool: string, secrets: readonly Substitution[], redact: (text: string) => string): WaitEffects {
  const reasoned = <O extends { reason?: string }>(opts: O | undefined) =>
    opts?.reason === undefined ? opts : { ...opts, reason: redact(String(opts.reason)) };
  return {
    askHuman: (q) => ctx.askHuman({ ...q, question: typeof q.question === "string" ? redact(q.question) : q.question }),
    sleep: (duration, opts) => ctx.sleep(duration, reasoned(opts)),
    sleepUntil: (time, opts) => ctx.sleepUntil(time, reasoned(opts)),
    waitForEvent: async (event, opts) => {
      const key = opts?.key;
      const held = typeof key === "string" ? secrets.filter((s) => redactor([s])(key) !== key).map((s) => s.name) : [];
      if (held.length)
        throw new ToolError(
          `${tool}: ctx.waitForEvent key holds the value of ${held.join(", ")}, a secret this instance's config was filled with; a key is shown where the run is listed`,
        );
      return ctx.waitForEvent(event, reasoned(opts) as typeof opts);
    },
  };
}
