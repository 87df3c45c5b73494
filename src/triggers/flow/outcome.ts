/**
 * What a delivery of a flow-controlled trigger came to: the answer of `POST /hooks/:name`
 * (202, with `run_id` and `status_url` added when a run is named), the same for every
 * redelivery of it (`duplicate: true` then). The schemas are the API's (src/api/hooks.ts).
 */

import type * as z from "zod";
import type { flowOutcomeSchema } from "../../api/hooks";

export type FlowOutcome = z.infer<typeof flowOutcomeSchema>;
/** A delivery the key would not take now: over its rate (`over: refuse`), or its line is full. Nothing is recorded: a redelivery is decided afresh. */
export interface FlowRefusal {
  refused: true;
  status: 429;
  error: string;
  retry_after?: number;
}
export type FlowAnswer = (FlowOutcome & { duplicate?: true }) | FlowRefusal;
