/** Evals (docs/evals.md): suites of cases run through the engine in Node, checked, reported. */
export { parseSuite, SuiteError, type EvalSuite, type EvalCase } from "./suite";
export { runSuite, type EvalEnv, type SuiteResult } from "./run-suite";
export { summarize, table, junitXml, type EvalReport } from "./report";
export type { CaseResult } from "./run-case";
