import type { RequestOptions, Transport } from "./transport";
import type { WorkerList } from "./types";

/** The catalog. */
export class Workers {
  constructor(private readonly transport: Transport) {}

  /** `GET /workers`: each worker with its input schema. */
  list(options?: RequestOptions): Promise<WorkerList> {
    return this.transport.json({ method: "GET", path: "/workers" }, options);
  }
}
