import * as z from "zod";
import { defineToolset, tool } from "../engine";

/**
 * A durable counter: the smallest useful kind, and the example of docs/guide.md. Its value
 * lives in `ctx.state`, so `scope: run` counts per run and `scope: global` across runs.
 */
export const counter = defineToolset({
  kind: "counter",
  description: "A counter kept in the instance's scope",
  config: z.strictObject({ start: z.number().int().default(0) }),
  create: (config, init) => ({ start: config.start, state: init.state }),
  tools: {
    increment: tool({
      description: "Add to the counter and return its new value",
      input: z.strictObject({ by: z.number().int().default(1) }),
      // It changes only its own state: no approval needed by default.
      approval: "allow",
      async run({ by }, _ctx, self: { start: number; state: import("../engine").StateKV }) {
        const value = ((await self.state.get<number>("value")) ?? self.start) + by;
        await self.state.put("value", value);
        return value;
      },
    }),
  },
});
