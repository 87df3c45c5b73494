import type { DryRun, Operation, OperationParams, StartedOperation } from "./operation-types";
import type { RequestOptions, Transport } from "./transport";

/** `/operations`: cancel, resume or fork every run a filter matches, in one request. */
export class Operations {
  constructor(private readonly transport: Transport) {}

  /** `POST /operations`, with an `Idempotency-Key` (yours, or a new one) sent on every attempt: retried like a start. */
  create(params: OperationParams, options?: RequestOptions): Promise<StartedOperation> {
    const { idempotencyKey = crypto.randomUUID(), ...body } = params;
    return this.transport.json({ method: "POST", path: "/operations", body, headers: { "idempotency-key": idempotencyKey } }, options);
  }

  /** `POST /operations` with `dry_run: true`: the runs it would touch, and nothing done. */
  dryRun(params: Omit<OperationParams, "idempotencyKey">, options?: RequestOptions): Promise<DryRun> {
    return this.transport.json({ method: "POST", path: "/operations", body: { ...params, dry_run: true } }, options);
  }

  /** `GET /operations/:id`: its status and counts. */
  get(id: string, options?: RequestOptions): Promise<Operation> {
    return this.transport.json({ method: "GET", path: operationPath(id) }, options);
  }

  /** `POST /operations/:id/cancel`: it acts on no run after; what it did stays done. */
  cancel(id: string, options?: RequestOptions): Promise<Operation> {
    return this.transport.json({ method: "POST", path: `${operationPath(id)}/cancel` }, options);
  }
}

const operationPath = (id: string) => `/operations/${encodeURIComponent(id)}`;
