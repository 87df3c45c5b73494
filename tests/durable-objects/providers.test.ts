import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { settle, stub } from "./helpers";

/** Loads a script into one of the two fake servers; returns a reader of what that server saw. */
async function provider(baseUrl: string, id: string, replies: unknown[]) {
  const res = await fetch(`${baseUrl}/scripts/${id}`, { method: "PUT", body: JSON.stringify(replies) });
  if (!res.ok) throw new Error(`fake server refused the script ${id}`);
  return async () =>
    (await (await fetch(`${baseUrl}/scripts/${id}`)).json()) as {
      requests: any[];
      authorizations: Array<string | null>;
      headers: Array<Record<string, string>>;
    };
}

describe("model providers from models.yaml in a durable run", () => {
  it("two workers of one run on two OpenAI-compatible providers: each server sees only its own key; prices come from models.yaml", async () => {
    // tests/fixtures/workers/models.yaml: alpha → server 1 with ${ALPHA_API_KEY}, beta → server 2 with ${BETA_API_KEY}.
    const alpha = await provider(env.FAKE_OPENAI_URL, "providers-alpha", [
      { tool_calls: [{ id: "h1", name: "providers-helper", arguments: { input: "help me" } }], usage: { prompt_tokens: 100, completion_tokens: 10 } },
      { text: "lead done", usage: { prompt_tokens: 200, completion_tokens: 20 } },
    ]);
    const beta = await provider(env.FAKE_OPENAI_2_URL, "providers-beta", [{ text: "helped", usage: { prompt_tokens: 1000, completion_tokens: 100 } }]);

    await stub("prov-two").start({ id: "prov-two", worker: "providers-lead", input: { input: "go" }, approvalMode: "ask", budget: {} });
    const view = await settle("prov-two");
    expect(view).toMatchObject({ status: "succeeded", output: "lead done" });

    const seenByAlpha = await alpha();
    const seenByBeta = await beta();
    expect(seenByAlpha.authorizations).toEqual(["Bearer sk-alpha", "Bearer sk-alpha"]);
    expect(seenByBeta.authorizations).toEqual(["Bearer sk-beta"]);
    // OPENAI_CUSTOM_HEADERS is set in this pool's env (vitest.config.ts); neither provider was configured with it.
    expect([...seenByAlpha.headers, ...seenByBeta.headers].map((h) => h["x-from-env"])).toEqual([undefined, undefined, undefined]);
    expect(seenByBeta.headers[0]).toMatchObject({ "x-provider": "beta" });
    expect(seenByAlpha.requests.map((r) => r.model)).toEqual(["lead", "lead"]);
    expect(seenByBeta.requests[0]).toMatchObject({ model: "helper", messages: [{ role: "system" }, { role: "user", content: "help me" }] });
    expect(seenByAlpha.requests[1].messages.at(-1)).toEqual({ role: "tool", tool_call_id: "h1", content: "helped" });

    // alpha:lead at $1/$2 and beta:helper at $10/$20 per million tokens (models.yaml), rolled up to the run.
    const cost = (300 * 1 + 30 * 2 + 1000 * 10 + 100 * 20) / 1e6;
    expect(view.usage).toMatchObject({ requests: 3, inputTokens: 1300, outputTokens: 130 });
    expect(view.usage!.costUsd).toBeCloseTo(cost, 12);
  });
});
