import { effectUrl, script } from "./helpers";

/** The six side effects of the nested run, each a POST counted outside it. */
export const NESTED_EFFECTS = ["o1", "o2", "o3", "i1", "i2", "i3"];

/**
 * Scripts the durability fixture: evict-outer calls evict-inner and posts three
 * effects; evict-inner posts three, the last (danger_fetch) after an approval.
 * 7 tool calls, 6 model requests. Effects are named `<tag>-<effect>`. `prefix`: the
 * fixtures' pair (`trace`: trace-outer and trace-inner, the same workers under their own scripts).
 */
export async function scriptNestedRun(tag: string, prefix: "evict" | "trace" = "evict"): Promise<void> {
  const post = (name: string) => ({ url: effectUrl(`${tag}-${name}`), method: "POST", body: name });
  await script(`${prefix}-outer`, [
    {
      tool_calls: [
        { name: `${prefix}-inner`, arguments: { input: "inner work" } },
        { name: "fx_fetch", arguments: post("o1") },
      ],
    },
    {
      tool_calls: [
        { name: "fx_fetch", arguments: post("o2") },
        { name: "fx_fetch", arguments: post("o3") },
      ],
    },
    { text: "outer done" },
  ]);
  await script(`${prefix}-inner`, [
    {
      tool_calls: [
        { name: "fx_fetch", arguments: post("i1") },
        { name: "fx_fetch", arguments: post("i2") },
      ],
    },
    { tool_calls: [{ name: "danger_fetch", arguments: post("i3") }] },
    { text: "inner done" },
  ]);
}
