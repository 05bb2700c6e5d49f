export { sessionWorkflow } from './session';
export { turnWorkflow } from './turn';
