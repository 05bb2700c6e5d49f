import { createBudgetActivities, type BudgetActivityDeps } from './budget';
import { createModelActivities, type ModelDeps } from './model';
import { createSkillActivities, type SkillActivityDeps } from './skills';
import { createToolActivities, type ToolActivityDeps } from './tools';
import { createTurnStartActivities } from './turn-start';

export interface ActivityDeps {
  model: ModelDeps;
  skills: SkillActivityDeps;
  tools: ToolActivityDeps;
  /** The token ledgers; absent: this worker's memory. */
  budget?: BudgetActivityDeps;
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
    ...createBudgetActivities(deps.budget),
  };
}

export type Activities = ReturnType<typeof createActivities>;
