/** The call-scope id: unique per run and call path, so nested and recursive calls never share. */
export const callScopeId = (runId: string, path: string) => `${runId}:${path}`;
