export { sessionWorkflow } from './session';
export { turnWorkflow } from './turn';
export { skillWorkflow } from './skill-workflow';
