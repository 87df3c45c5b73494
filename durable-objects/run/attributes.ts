/**
 * A run's attributes: those it started with (the run row's `attributes`, written by the start)
 * under those its code set (`ctx.setAttribute`, a journal step each). Owns the `attributes`
 * table (schema.ts, made on first use): the latest value per name, written when the step is
 * recorded (the journal store calls `recorded`), never on replay, which records nothing.
 * Needs from its host: the SQL, `row` and `noted` (the index hears of each change).
 */

import { parseKey } from "../../src/engine/journal/keys";
import type { Attributes } from "../../src/engine/attributes";
import { madeOnFirstUse, makeOnFirstUse } from "../schema";
import { parse } from "../sql";
import type { RunHost } from "./host";

export class RunAttributes {
  constructor(private readonly host: Pick<RunHost, "sql" | "row" | "noted">) {}

  /** The run's attributes now: the start's, each overwritten by the latest value its code set. */
  current(): Attributes {
    const started = parse<Attributes | null>(this.host.row()?.attributes) ?? {};
    if (!madeOnFirstUse(this.host.sql, "attributes")) return started;
    const set = this.host.sql.all<{ name: string; value: string }>`SELECT name, value FROM attributes`;
    return { ...started, ...Object.fromEntries(set.map((r) => [r.name, r.value])) };
  }

  /** A journal step was recorded: a `ctx.setAttribute` one (`<call>/attr:<n>`, value `{name, value}`) is kept here. */
  recorded(key: string, value: unknown): void {
    if (!key.includes("/attr:")) return;
    const k = parseKey(key);
    if (k.kind !== "effect" || k.effect !== "attr") return;
    const { name, value: text } = value as { name: string; value: string };
    makeOnFirstUse(this.host.sql, "attributes");
    this.host.sql.run`INSERT INTO attributes (name, value) VALUES (${name}, ${text}) ON CONFLICT (name) DO UPDATE SET value = excluded.value`;
    this.host.noted("attribute_set", { name });
  }
}
