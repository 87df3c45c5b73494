import * as z from "zod";
import { API_DECIDER, MAX_ADDRESS_LENGTH, MAX_DECIDERS, normalizeAddress, readDeciderEntry } from "../../approvals/deciders";
import { MAX_QUESTION_CHARS } from "../../approvals/ask-human";
import { ToolError } from "../../errors";
import type { DeciderPolicy } from "../../types/deciders";
import { defineToolset, tool } from "../define";

const entry = z
  .string()
  .max(MAX_ADDRESS_LENGTH)
  .refine((e) => !("problem" in readDeciderEntry(e)), { message: `must be a plain ASCII address, *@domain or ${API_DECIDER}` });

const config = z.strictObject({
  ask: z
    .array(entry)
    .min(1)
    .max(MAX_DECIDERS)
    .optional()
    .describe(`who may answer (addresses, *@domain, ${API_DECIDER}); the model may address its questions only to the addresses listed`),
});

type Self = { deciders?: DeciderPolicy };

/** The instance's policy, entries normalized as the catalog normalizes an approval's `ask`. */
function policyOf(c: z.output<typeof config>): DeciderPolicy | undefined {
  const ask = c.ask?.map((e) => (readDeciderEntry(e) as { entry: string }).entry);
  return ask ? { ask: [...new Set(ask)] } : undefined;
}

/**
 * Questions to people: `ask(question, to?)` emails the question (to `to`, which the
 * instance's `ask` list must name; else the worker's `notify`), pauses the run, and
 * returns the answer, or "no answer" once the question expired.
 */
export const human = defineToolset({
  kind: "human",
  description: "Ask a person a question and wait for the answer",
  config,
  create: (c): Self => ({ deciders: policyOf(c) }),
  tools: {
    ask: tool({
      description: "Ask a person a question by email and wait for their answer (minutes or days); returns the answer text",
      input: z.strictObject({
        question: z.string().min(1).max(MAX_QUESTION_CHARS).describe("the question, complete: the person reads only this"),
        to: z.string().max(MAX_ADDRESS_LENGTH).optional().describe("whom to ask: one of the addresses this toolset may ask"),
      }),
      // Asking is the point of this kind: the person answering is the gate.
      approval: "allow",
      async run({ question, to }, ctx, self: Self) {
        if (to !== undefined) {
          const address = normalizeAddress(to);
          if (!address || !self.deciders?.ask?.includes(address)) {
            const named = self.deciders?.ask?.filter((e) => e !== API_DECIDER && !e.startsWith("*@")) ?? [];
            throw new ToolError(
              `cannot ask ${JSON.stringify(to.slice(0, 80))}: ${named.length ? `ask one of ${named.join(", ")}` : "this toolset names nobody to address; leave out to"}`,
            );
          }
        }
        const got = await ctx.askHuman({ question, ...(to ? { to: normalizeAddress(to)! } : {}), ...(self.deciders ? { deciders: self.deciders } : {}) });
        return got.answered ? { answer: got.answer, by: got.by?.email ?? null } : { answer: null, note: `no answer: ${got.reason}` };
      },
    }),
  },
});
