/**
 * Every workflow the worker registers, by type name (workflows/definitions.ts): the current code under
 * `workflowTypes`, and the code frozen in workflows/legacy/ under `legacyWorkflowTypes`, so runs started on it finish on
 * it (docs/run-machine.md, "The version boundary").
 */
export { sessionWorkflow as session } from './session';
export { turnWorkflow as turn } from './turn';
export { skillWorkflow as skillRun } from './skill-workflow';
export { sessionWorkflow, turnWorkflow, skillWorkflow } from './legacy';
