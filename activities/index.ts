import { createModelActivities, type ModelDeps } from './model';
import { createSkillActivities, type SkillActivityDeps } from './skills';
import { createToolActivities, type ToolActivityDeps } from './tools';
import { createTurnStartActivities } from './turn-start';

export interface ActivityDeps {
  model: ModelDeps;
  skills: SkillActivityDeps;
  tools: ToolActivityDeps;
}

/** Every activity the worker registers, built from its dependencies (no globals, so tests inject their own). */
export function createActivities(deps: ActivityDeps) {
  const skills = createSkillActivities(deps.skills);
  const tools = createToolActivities(deps.tools);
  return {
    ...createModelActivities(deps.model),
    ...skills,
    ...tools,
    ...createTurnStartActivities(skills, tools),
  };
}

export type Activities = ReturnType<typeof createActivities>;
