import { DurableObject } from "cloudflare:workers";

/** One run: its SQLite journal, approvals and run-scoped state (filled in by the durable-runs issue). */
export class RunDO extends DurableObject<Env> {}
