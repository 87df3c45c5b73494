import * as z from "zod";
import { attributeNameProblem, attributeValue, type Attributes } from "../engine/attributes";

/**
 * Attributes at an edge (a start's, `POST /runs`; a filter's, `attr.<name>` and `POST /operations`):
 * at most `max` names, each name and value checked by the engine's grammar (src/engine/attributes.ts),
 * each problem reported at the attribute's own path.
 */
export const attributesSchema = (max: number, what: string) =>
  z.record(z.string(), z.unknown()).transform((raw, ctx) => {
    const entries = Object.entries(raw);
    if (entries.length > max) {
      ctx.addIssue({ code: "custom", message: `at most ${max} ${what}, got ${entries.length}` });
      return z.NEVER;
    }
    const out: Attributes = {};
    for (const [name, value] of entries) {
      const nameProblem = attributeNameProblem(name);
      const v = nameProblem ? { problem: nameProblem } : attributeValue(value);
      if ("problem" in v) ctx.addIssue({ code: "custom", path: [name], message: v.problem });
      else out[name] = v.value;
    }
    return out;
  });
