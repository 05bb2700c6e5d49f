/**
 * The workflow type names, by kind. The current code runs under `workflowTypes`; `legacyWorkflowTypes` are the names of
 * the code frozen in workflows/legacy/ (docs/run-machine.md, "The version boundary"), registered beside them by every
 * worker until no run of theirs is left. Workflow code and the API import them through workflows/definitions.ts.
 */
export const workflowTypes = { session: 'session', turn: 'turn', skillRun: 'skillRun' } as const;
export const legacyWorkflowTypes = {
  session: 'sessionWorkflow',
  turn: 'turnWorkflow',
  skillRun: 'skillWorkflow',
} as const;

export type WorkflowKind = keyof typeof workflowTypes;

/** Every type name a workflow of this kind may run under: the current one, then the legacy one. */
export function typeNamesOf(kind: WorkflowKind): readonly string[] {
  return [workflowTypes[kind], legacyWorkflowTypes[kind]];
}

/** Whether a workflow of this type name is of this kind, on either side of the boundary. */
export function isWorkflowOfKind(kind: WorkflowKind, typeName: string): boolean {
  return typeNamesOf(kind).includes(typeName);
}

/** The visibility clause that matches the workflows of this kind on both sides: `WorkflowType IN ('turn', ...)`. */
export function workflowTypeClause(kind: WorkflowKind): string {
  return `WorkflowType IN (${typeNamesOf(kind)
    .map((name) => `'${name}'`)
    .join(', ')})`;
}

/** The visibility clause that matches only the legacy side's workflows of this kind. */
export function legacyTypeClause(kind: WorkflowKind): string {
  return `WorkflowType = '${legacyWorkflowTypes[kind]}'`;
}
