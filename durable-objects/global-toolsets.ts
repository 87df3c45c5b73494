import { DurableObject } from "cloudflare:workers";

/** The singleton holding `scope: global` toolset instances (filled in by the durable-runs issue). */
export class GlobalToolsetsDO extends DurableObject<Env> {}
