import { env } from "cloudflare:workers";
import { counter } from "../../../src/toolsets/counter";
import { files, http, human } from "../../../src/engine";
import { toolsetKindCases } from "./toolset.case";

toolsetKindCases(files, { config: { root: "/src" }, badConfig: { root: "relative" }, call: { tool: "list_files", args: {} } });
toolsetKindCases(http, {
  config: { allow: [env.FAKE_OPENAI_HOST] },
  badConfig: { allow: [] },
  call: { tool: "fetch", args: { url: `${env.FAKE_OPENAI_URL}/effects/kind-case` } },
});
toolsetKindCases(counter, { config: {}, badConfig: { start: "zero" }, call: { tool: "increment", args: {} } });
toolsetKindCases(human, {
  config: { ask: ["lead@example.com", "*@ops.example.com"] },
  badConfig: { ask: ["*@*"] },
  call: { tool: "ask", args: { question: "Which?" } },
});
