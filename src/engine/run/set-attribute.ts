import { MAX_ATTRIBUTES, type Attributes } from "../attributes";
import { nondeterministic, ToolError } from "../errors";
import type { Journal } from "../journal/journal";
import { parseKey } from "../journal/keys";

/** A `ctx.setAttribute` step's value: the attribute set, or why it was refused (recorded too, so a replay refuses it again). */
export type AttributeStep = { name: string; value: string } | { refused: string };

/**
 * Records `attr` under `key` (`<call>/attr:<n>`): once, so a replay writes nothing and the run's
 * attributes never go back to an older value meanwhile. Past MAX_ATTRIBUTES names (the start's and
 * those set before) it is refused; the refusal is the step's value. A replay asked for another
 * attribute at the key fails `nondeterministic`.
 */
export async function setAttributeStep(journal: Journal, started: Attributes, key: string, attr: { name: string; value: string }): Promise<void> {
  const step = await journal.step<AttributeStep>(key, () => admitted(journal, started, attr));
  if ("refused" in step) throw new ToolError(step.refused);
  if (step.name !== attr.name || step.value !== attr.value)
    throw nondeterministic(
      key,
      `ctx.setAttribute("${step.name}", …)`,
      `ctx.setAttribute("${attr.name}", …) with ${step.name === attr.name ? "another value" : "another name"}`,
    );
}

/** `attr`, unless it would be a name past the bound (counted from the start's and the journal's). */
function admitted(journal: Journal, started: Attributes, attr: { name: string; value: string }): AttributeStep {
  const names = new Set(Object.keys(started));
  for (const [key, value] of journal.entries()) {
    const k = parseKey(key);
    if (k.kind === "effect" && k.effect === "attr" && value && typeof value === "object" && "name" in value) names.add((value as { name: string }).name);
  }
  if (names.has(attr.name) || names.size < MAX_ATTRIBUTES) return attr;
  return {
    refused: `ctx.setAttribute("${attr.name}"): the run has ${names.size} attributes (${[...names].sort().join(", ")}), the most a run may have; set one of those`,
  };
}
