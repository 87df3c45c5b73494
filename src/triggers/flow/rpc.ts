import type { Attributes } from "../../engine/attributes";
import type { KeyValue } from "./key";
import type { FlowAnswer } from "./outcome";

/** A delivery of a flow-controlled trigger, handed to its key's object. */
export interface FlowDelivery {
  /** The trigger's name (its flow control is read from the deployed triggers.yaml). */
  trigger: string;
  /** The key's values, as read from the payload. */
  key: KeyValue[];
  /** What makes the delivery one delivery (delivery.ts `idempotencyKey`). */
  id: string;
  /** The worker's input, mapped and checked. */
  input: unknown;
  /** What started the run, for its `trigger` field. */
  record: Record<string, unknown>;
  /** The run's attributes, as the trigger maps them from the payload. */
  attributes?: Attributes;
}

/** What the app and the runs ask of one key's object (durable-objects/flow/flow-key.ts implements it). */
export interface FlowKeyRpc {
  /** Takes a delivery once (its id): acts on it now, or keeps it in the key's line or batch; a redelivery answers as the first. */
  deliver(d: FlowDelivery): Promise<FlowAnswer>;
  /** A run this key started ended (the run's outbox says so, at least once): its slot frees. */
  runEnded(runId: string): Promise<void>;
}

/** The object of one (trigger, key): by the name `flowObjectName` gives (key.ts). */
export const flowKeyObject = (env: Env, name: string) => env.FLOW_KEYS.getByName(name) as unknown as FlowKeyRpc;
