import { ToolError } from "../engine/errors";
import { describeIssues, validatorFor } from "../engine/json-schema";
import type { ToolsetKind, ToolsetRegistry } from "../engine/types/kind";
import type { Toolset } from "../engine/types/toolset";
import { argsMismatch } from "./args-pattern";
import type { ToolStub } from "./suite";

/** A case's stubs: exposed tool name (`github_fetch`) → its canned answers. */
export type Stubs = Readonly<Record<string, ToolStub | ToolStub[]>>;

/**
 * The kinds, each answering the stubbed tools of the run that calls them instead of
 * running them (`stubsOf` looks a run's stubs up by its id: one catalog serves every
 * case of a suite, concurrently). A stubbed call is still approval-gated and journaled
 * like a real one: the stub sits where the kind would run. The real instance is made
 * only for a call no stub answers (or to list a dynamic kind's tools, e.g. MCP).
 * Framed kinds (worker_creation) act on the run itself and are never stubbed.
 */
export function stubbedKinds(kinds: ToolsetRegistry, stubsOf: (runId: string) => Stubs | undefined): ToolsetRegistry {
  return new Map([...kinds].map(([name, kind]) => [name, kind.framed ? kind : stubbedKind(kind, stubsOf)]));
}

function stubbedKind(kind: ToolsetKind, stubsOf: (runId: string) => Stubs | undefined): ToolsetKind {
  return {
    kind: kind.kind,
    description: kind.description,
    scope: kind.scope,
    config: kind.config,
    definitions: kind.definitions,
    dynamic: kind.dynamic,
    checkInstance: kind.checkInstance?.bind(kind),
    async instantiate(id, config, init): Promise<Toolset> {
      let real: Promise<Toolset> | undefined;
      const inner = () => (real ??= kind.instantiate(id, config, init));
      // As instances.ts exposes them: an instance named after its kind is not prefixed.
      const exposed = (tool: string) => (init.name === kind.kind ? tool : `${init.name}_${tool}`);
      return {
        id,
        listTools: async () => (kind.dynamic ? (await inner()).listTools() : kind.definitions),
        async callTool(name, args, ctx) {
          const stubs = stubsOf(ctx.runId)?.[exposed(name)];
          if (!stubs) return (await inner()).callTool(name, args, ctx);
          checkArgs(kind, name, args);
          return answer(exposed(name), [stubs].flat(), args);
        },
        close: async () => {
          if (real) await (await real).close?.();
        },
      };
    },
  };
}

/** A stub answers only arguments the real tool would take (a model's invalid call fails as it would). */
function checkArgs(kind: ToolsetKind, name: string, args: unknown) {
  const def = kind.definitions.find((d) => d.name === name);
  if (!def) return;
  const parsed = validatorFor(def.parameters).safeParse(args);
  if (!parsed.success) throw new ToolError(`invalid arguments for ${name}: ${describeIssues(parsed.error)}`);
}

function answer(tool: string, stubs: ToolStub[], args: unknown): unknown {
  const stub = stubs.find((s) => s.args === undefined || argsMismatch(s.args, args) === undefined);
  if (!stub) throw new ToolError(`eval: no stub of ${tool} matches these arguments (${stubs.map((s) => argsMismatch(s.args, args)).join("; ")})`);
  if (stub.error !== undefined) throw new ToolError(stub.error);
  return stub.result;
}
