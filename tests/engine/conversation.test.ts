import { describe, expect, it } from "vitest";
import { MemoryJournalStore, scriptedModel } from "../../src/engine";
import { messageKey } from "../../src/engine/journal/keys";
import type { RecordedMessage } from "../../src/engine/run/conversation";
import { harness, workerFile } from "./helpers";

/** Records the conversation's n-th message as the run's host does. */
const sendTo = (store: MemoryJournalStore, root: string, n: number, text: string) => store.put(messageKey(root, n), { text, at: n } satisfies RecordedMessage);

const structured = workerFile(
  "name: labeler\nmodel: test:m\nmax_turns: 2\noutput:\n  type: object\n  properties: { label: { enum: [bug, docs] } }\n  required: [label]",
);

describe("a conversation in the loop (the root worker's later messages)", () => {
  it("each message gets its own max_turns and its own output retry; replay reaches the last message's answer", async () => {
    const answers = ['{"label": "bug"}', "not json", '{"label": "docs"}', "still not json", '{"label": "bug"}'];
    const model = scriptedModel((_req, n) => ({ text: answers[n]! }));
    const h = harness({ "l.worker": structured }, { models: { "test:m": model } });
    const store = new MemoryJournalStore();
    expect(await h.run({ worker: "labeler", input: { input: "crash" } }, store)).toMatchObject({ status: "succeeded", output: { label: "bug" } });
    sendTo(store, "labeler", 2, "and this?");
    // Two turns (a retry) for message 2, within its own max_turns of 2 although the run is at turn 3.
    expect(await h.run({ worker: "labeler", input: { input: "crash" } }, store)).toMatchObject({ status: "succeeded", output: { label: "docs" } });
    sendTo(store, "labeler", 3, "and that?");
    expect(await h.run({ worker: "labeler", input: { input: "crash" } }, store)).toMatchObject({ status: "succeeded", output: { label: "bug" } });
    expect(model.requests).toBe(5);
    expect([...store.entries.keys()].filter((k) => k.endsWith("/model"))).toEqual([1, 2, 3, 4, 5].map((t) => `labeler/turn:${t}/model`));
  });

  it("a message key under a nested worker's frame is not a conversation: the nested worker answers once", async () => {
    const files = {
      "lead.worker": workerFile("name: lead\nmodel: test:lead\ntoolsets:\n  workers: [helper]"),
      "helper.worker": workerFile("name: helper\ndescription: Helps\nmodel: test:helper"),
    };
    const lead = scriptedModel([{ toolCalls: [{ name: "helper", args: { input: "x" } }] }, { text: "lead done" }]);
    const helper = scriptedModel([{ text: "helped" }, { text: "helped twice" }]);
    const h = harness(files, { models: { "test:lead": lead, "test:helper": helper } });
    const store = new MemoryJournalStore();
    store.put("lead/turn:1/tool:1/helper/message:2", { text: "planted", at: 1 });
    expect(await h.run({ worker: "lead", input: { input: "go" } }, store)).toMatchObject({ status: "succeeded", output: "lead done" });
    expect(helper.requests).toBe(1);
  });
});
