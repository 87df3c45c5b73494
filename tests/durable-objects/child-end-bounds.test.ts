import { describe, expect, it } from "vitest";
import { boundedEnd, MAX_CHILD_OUTPUT_BYTES, MAX_CHILD_OUTPUTS_TOTAL_BYTES } from "../../durable-objects/run/children";

const end = (bytes: number) => ({ ended: "child" as const, at: 1, run: "c", status: "succeeded" as const, output: "x".repeat(bytes) });

describe("a child's end as its parent records it (review 5)", () => {
  it("an output fits under the per-child bound while the parent has room for all its children's outputs", () => {
    expect(boundedEnd(end(1000), "c", MAX_CHILD_OUTPUTS_TOTAL_BYTES)).toMatchObject({ status: "succeeded" });
    expect(boundedEnd(end(MAX_CHILD_OUTPUT_BYTES + 1), "c", MAX_CHILD_OUTPUTS_TOTAL_BYTES)).toMatchObject({
      status: "failed",
      error: { code: "output_too_large", message: expect.stringContaining(`at most ${MAX_CHILD_OUTPUT_BYTES}`) },
    });
  });

  it("past the parent's total, a further output is recorded as a failure that says so: the journal a parent loads stays bounded", () => {
    expect(boundedEnd(end(1000), "c", 500)).toMatchObject({
      status: "failed",
      error: { code: "output_too_large", message: expect.stringContaining(`${MAX_CHILD_OUTPUTS_TOTAL_BYTES} bytes in all`) },
    });
    expect(boundedEnd(end(10), "c", -5)).toMatchObject({ status: "failed" });
    // An end without an output takes no room.
    expect(boundedEnd({ ended: "child", at: 1, run: "c", status: "failed", error: { code: "x", message: "y" } }, "c", -5)).toMatchObject({ status: "failed" });
  });
});
