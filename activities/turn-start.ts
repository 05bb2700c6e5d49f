import { SkillError, nonRetryableSkillErrors } from '../core/skills';
import { emptyToolCatalog } from '../core/tools';
import type { TurnStart, TurnStartRequest } from '../core/turn-start';
import type { SkillActivities } from './skills';
import type { ToolActivities } from './tools';

/**
 * A turn's start in one activity, so in one workflow task: the skill catalog, the tool catalog, the carried plan's
 * skills and the given skill, read as the separate activities read them. A skill error of the given skill is returned
 * for the turn to show the model (as a failed load_skill would be); any other error of its load leaves it unread (the
 * turn loads it then, as before); any other error fails the activity, which is retried.
 */
export function createTurnStartActivities(skills: SkillActivities, tools: ToolActivities) {
  return {
    async readTurnStart(input: TurnStartRequest): Promise<TurnStart> {
      const [catalog, toolCatalog, carried] = await Promise.all([
        skills.skillCatalog(),
        !input.tools ? emptyToolCatalog : input.toolsByReference ? tools.toolCatalogReference() : tools.toolCatalog(),
        input.carried.length > 0
          ? skills.resolveSkillSnapshots({ skills: input.carried })
          : { snapshots: [], unavailable: [] },
      ]);
      const { given } = input;
      const wanted =
        given &&
        catalog.skills.some((skill) => skill.name === given) &&
        !carried.snapshots.some((snapshot) => snapshot.name === given);
      if (!wanted) return { catalog, tools: toolCatalog, carried };
      try {
        return {
          catalog,
          tools: toolCatalog,
          carried,
          given: { snapshot: await skills.loadSkillSnapshot({ name: given }) },
        };
      } catch (err) {
        // Any other error: left unread, so the turn loads it with loadSkillSnapshot, retried, its failure shown to the model.
        if (!(err instanceof SkillError) || !nonRetryableSkillErrors.includes(err.name))
          return { catalog, tools: toolCatalog, carried };
        return { catalog, tools: toolCatalog, carried, given: { failure: { type: err.name, message: err.message } } };
      }
    },
  };
}
