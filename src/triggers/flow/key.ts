/**
 * A delivery's key: the values at the trigger's `key` pointers, each bounded. The key
 * object (durable-objects/flow) is named by the hash of trigger and values, so a key's
 * deliveries meet in one object and different keys never share one; neither the values
 * nor the trigger name shape anything but that hash.
 */

import { sha256Hex } from "../../engine/ids";
import { resolvePointer } from "../json-pointer";
import { MAX_KEY_VALUE_CHARS } from "./config";

export type KeyValue = string | number | boolean;

/** The key's values in the payload, in the order of `pointers` (none: the trigger is one key); or why the delivery has no key. */
export function keyValues(pointers: readonly string[] | undefined, payload: unknown): { values: KeyValue[] } | { error: string } {
  const values: KeyValue[] = [];
  for (const pointer of pointers ?? []) {
    const v = resolvePointer(payload, pointer);
    const missing = `key: ${pointer} is missing from the payload; every delivery of this trigger needs a value there (a filter can ignore the others)`;
    if (v === undefined || v === null) return { error: missing };
    if (typeof v === "string") {
      if (!v.length) return { error: `key: ${pointer} is an empty string` };
      if (v.length > MAX_KEY_VALUE_CHARS) return { error: `key: ${pointer} is ${v.length} characters, over ${MAX_KEY_VALUE_CHARS}` };
    } else if (typeof v === "number") {
      if (!Number.isFinite(v)) return { error: `key: ${pointer} is not a finite number` };
    } else if (typeof v !== "boolean")
      return { error: `key: ${pointer} is ${Array.isArray(v) ? "an array" : "an object"}; a key value is a string, number or boolean` };
    values.push(v);
  }
  return { values };
}

/** The name of the key's object: one per (trigger, key values). */
export const flowObjectName = (trigger: string, values: readonly KeyValue[]) => sha256Hex(`flow\n${trigger}\n${JSON.stringify(values)}`);
