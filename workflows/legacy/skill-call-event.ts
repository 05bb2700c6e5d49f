import type { ToolCall } from './core/policy';
import { SkillToolName } from './core/skills';
import type { SkillCallEvent } from './tool-types';

/**
 * How a skill call shows in its tool events, from the call alone (runs with spending bounds): an invoke_skill names
 * the skill and the depth its run would run at, whether the run was offered invoke_skill or not (past the depth cap);
 * a load_skill loads the skill into the run itself, so its events carry the run's own depth (none in a turn).
 */
export function skillCallOf(call: ToolCall, depth: number): SkillCallEvent | undefined {
  if (call.name === SkillToolName.loadSkill) return { name: call.name, input: call.input };
  return call.name === SkillToolName.invokeSkill ? invokeSkillCallOf(call, depth) : undefined;
}

/** An invoke_skill call of a run at `depth`: the skill it names (else the tool's name), the depth it runs at, its input. */
export function invokeSkillCallOf(call: ToolCall, depth: number): SkillCallEvent {
  const input = (typeof call.input === 'object' && call.input !== null ? call.input : {}) as Record<string, unknown>;
  return {
    name: typeof input.skill === 'string' ? input.skill : call.name,
    depth: depth + 1,
    input: {
      task: input.task,
      params: input.params ?? {},
      ...(input.history !== undefined ? { history: input.history } : {}),
    },
  };
}
