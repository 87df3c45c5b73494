import { exampleValue } from "./example-value";
import { textOf } from "./model";
import type { Model, ModelRequest, ModelResponse } from "../types/model";

const estimateTokens = (req: ModelRequest) => Math.ceil(JSON.stringify(req.messages).length / 4);

/**
 * `test:tools`: on its first turn calls every offered tool once, in parallel, with
 * schema-valid arguments; then answers with a summary of the results (or, when an
 * output schema is set, a schema-valid JSON answer). Deterministic; usage is a
 * token estimate so budgets and roll-ups can be tested.
 */
export const testToolsModel: Model = {
  async request(req) {
    const calledAlready = req.messages.some((m) => m.role === "assistant" && m.toolCalls?.length);
    const usage = { inputTokens: estimateTokens(req), outputTokens: 10 };
    if (!calledAlready && req.tools.length) {
      return {
        text: null,
        toolCalls: req.tools.map((t, i) => ({ id: `call_${i + 1}`, name: t.name, arguments: JSON.stringify(exampleValue(t.parameters)) })),
        usage,
      };
    }
    if (req.output) return { text: JSON.stringify(exampleValue(req.output)), toolCalls: [], usage };
    const results = req.messages.flatMap((m) => (m.role === "tool" ? [m.content] : []));
    const text = results.length ? `called ${results.length} tool(s): ${results.join(" | ")}` : `done: ${lastUser(req)}`;
    return { text, toolCalls: [], usage };
  },
};

/** The last user message's text; attachments as `[attachment name (type, size)]`, never their bytes. */
const lastUser = (req: ModelRequest) => {
  const m = [...req.messages].reverse().find((m) => m.role === "user");
  return m ? textOf(m.content) : "";
};

/** One scripted reply: text, tool calls (arguments as objects), optional usage. */
export interface ScriptedReply {
  text?: string;
  /** `arguments` (raw text) wins over `args` (JSON-encoded): to script malformed JSON. */
  toolCalls?: Array<{ name: string; args?: unknown; arguments?: string; id?: string }>;
  usage?: { inputTokens: number; outputTokens: number };
}

/**
 * A model that plays a fixture: a list of replies in order, or a function of the
 * request (to react to tool results such as a rejection). Counts its requests.
 */
export function scriptedModel(script: ScriptedReply[] | ((req: ModelRequest, n: number) => ScriptedReply)): Model & { requests: number } {
  const model = {
    requests: 0,
    async request(req: ModelRequest): Promise<ModelResponse> {
      const n = model.requests++;
      const reply = typeof script === "function" ? script(req, n) : script[n];
      if (!reply) throw new Error(`scripted model ran out of replies at request ${n + 1}`);
      return {
        text: reply.text ?? null,
        toolCalls: (reply.toolCalls ?? []).map((c, i) => ({
          id: c.id ?? `call_${n + 1}_${i + 1}`,
          name: c.name,
          arguments: c.arguments ?? JSON.stringify(c.args ?? {}),
        })),
        usage: reply.usage ?? { inputTokens: estimateTokens(req), outputTokens: 5 },
      };
    },
  };
  return model;
}
