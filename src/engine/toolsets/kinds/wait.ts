import * as z from "zod";
import { boundedWait, durationMs, EVENT_NAME, MAX_CORRELATION_CHARS, MAX_REASON_CHARS, MAX_WAIT_MS, shownDuration } from "../../waits/bounds";
import { defineToolset, tool } from "../define";

/** The longest wait a `wait` instance allows unless its config says otherwise. */
export const DEFAULT_MAX_WAIT = "7d";

const duration = z.string().min(2).max(12).describe("a duration such as 90s, 20m, 2h or 1d");

/** `max` as ms: checked when the worker file is loaded, so a bad one never reaches a run. */
const maxWait = z
  .string()
  .default(DEFAULT_MAX_WAIT)
  .transform((v, ctx) => {
    try {
      return boundedWait(durationMs(v, "max"), MAX_WAIT_MS, "max");
    } catch (err) {
      ctx.addIssue({ code: "custom", message: (err as Error).message });
      return z.NEVER;
    }
  });

/**
 * Durable waiting for a model: `sleep` ("check again in 20 minutes") and
 * `wait_for_event` ("until CI reports, at most 2 hours"). The run pauses in between,
 * holding one alarm and nothing else; each wait is bounded by the instance's `max`.
 */
export const wait = defineToolset({
  kind: "wait",
  description: "Pause the run durably: sleep for a while, or wait for an event",
  config: z.strictObject({ max: maxWait }),
  create: (config) => config,
  tools: {
    sleep: tool({
      description: "Pause for a while, then continue (the run costs nothing meanwhile). Say why in `reason`.",
      readOnly: true,
      input: z.strictObject({ duration, reason: z.string().max(MAX_REASON_CHARS).describe("why you wait, shown to people") }),
      async run({ duration, reason }, ctx, self: { max: number }) {
        const ms = boundedWait(durationMs(duration, "duration"), self.max, "sleep");
        await ctx.sleep(ms, { reason });
        return `slept ${shownDuration(ms)}`;
      },
    }),
    wait_for_event: tool({
      description:
        "Wait until an event arrives (its payload is the result), or until the timeout (the result says it timed out). " +
        "`key` narrows it to one correlation key, e.g. a commit sha a webhook will name.",
      readOnly: true,
      input: z.strictObject({
        name: z.string().regex(EVENT_NAME).describe("the event's name, e.g. ci_finished"),
        timeout: duration,
        key: z.string().min(1).max(MAX_CORRELATION_CHARS).optional().describe("correlation key the event must carry"),
      }),
      async run({ name, timeout, key }, ctx, self: { max: number }) {
        const ms = boundedWait(durationMs(timeout, "timeout"), self.max, "wait_for_event");
        const result = await ctx.waitForEvent(name, { timeout: ms, ...(key === undefined ? {} : { key }) });
        return result.status === "timed_out"
          ? { event: name, timed_out: true, message: result.message }
          : { event: name, id: result.id, payload: result.payload };
      },
    }),
  },
});
