import { createModelActivities, type ModelDeps } from './model';

export interface ActivityDeps {
  model: ModelDeps;
}

/** Every activity the worker registers, built from its dependencies (no globals, so tests inject their own). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createModelActivities(deps.model),
  };
}

export type Activities = ReturnType<typeof createActivities>;
