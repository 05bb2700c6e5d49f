import { humanApprovalToolName, SkillToolName } from '../skills/tool-names';
import { onCheckpointRequested } from './checkpoint-rules';
import { activate } from './clock';
import { allowedNow, isUnfinished, startSkillPlan, stepLimitNote, stepRefusal, takeStep } from './plan';
import { loadRefusal, toolsInScope } from './scope';
import type { PolicyState, Reduction, ToolCall, ToolOutcome } from './types';
import { allow, refuse, violation } from './verdicts';

/** Tool calls: which the model may make now, what the engine's own tools mean, and what a finished one changed. */

const stringField = (input: unknown, key: string): string | undefined => {
  const value = (input as Record<string, unknown> | null)?.[key];
  return typeof value === 'string' ? value : undefined;
};

export function onToolRequested(state: PolicyState, call: ToolCall, at: number): Reduction {
  switch (call.name) {
    case SkillToolName.loadSkill: {
      const name = stringField(call.input, 'name');
      const refusal = name === undefined ? null : loadRefusal(state, name);
      return refusal ? violation(state, refusal) : allow(state);
    }
    case SkillToolName.loadSubskill: {
      const skill = stringField(call.input, 'skill');
      const subskill = stringField(call.input, 'subskill');
      const { plan } = state;
      const refusal = plan && plan.skill === skill && subskill !== undefined ? stepRefusal(plan, subskill) : null;
      return refusal ? violation(state, refusal) : allow(state);
    }
    case humanApprovalToolName:
      return onCheckpointRequested(state, call, at);
    default: {
      const tools = toolsInScope(state);
      if (tools.includes(call.name)) return allow(state);
      return refuse(state, `There is no tool named "${call.name}". Available tools: ${tools.join(', ')}.`);
    }
  }
}

export function onToolFinished(state: PolicyState, call: ToolCall, outcome: ToolOutcome, at: number): Reduction {
  switch (outcome.kind) {
    case 'skill.loaded': {
      const { manifest } = outcome;
      // A reload of the skill in progress keeps its position; any other skill starts its own plan.
      const plan = isUnfinished(state.plan) && state.plan.skill === manifest.name ? state.plan : startSkillPlan(manifest, at);
      const next = activate({ ...state, plan, route: null, instructions: { ...state.instructions, skill: call.id } }, manifest, at);
      return allow(next, { allowedNext: plan ? allowedNow(plan) : [] });
    }
    case 'subskill.loaded': {
      const { plan } = state;
      const instructions = { ...state.instructions, step: call.id };
      if (!plan || plan.skill !== outcome.skill) return allow({ ...state, instructions });
      const moved = takeStep(plan, outcome.subskill);
      const note = moved === plan ? undefined : stepLimitNote(moved, outcome.subskill);
      return allow({ ...state, plan: moved, instructions }, note ? { note } : {});
    }
    default:
      return allow(state);
  }
}
