import { createModelActivities, type ModelDeps } from './model';
import { createSkillActivities, type SkillActivityDeps } from './skills';
import { createToolActivities, type ToolActivityDeps } from './tools';

export interface ActivityDeps {
  model: ModelDeps;
  skills: SkillActivityDeps;
  tools: ToolActivityDeps;
}

/** Every activity the worker registers, built from its dependencies (no globals, so tests inject their own). */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createModelActivities(deps.model),
    ...createSkillActivities(deps.skills),
    ...createToolActivities(deps.tools),
  };
}

export type Activities = ReturnType<typeof createActivities>;
