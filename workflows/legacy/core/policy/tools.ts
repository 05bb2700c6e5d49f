import { humanApprovalToolName, SkillToolName } from '../skills/tool-names';
import { validateJson } from '../json-validator';
import { onCheckpointRequested, onToolApprovalNeeded } from './checkpoint-rules';
import { activate } from './clock';
import { allowedNow, isUnfinished, startSkillPlan, stepLimitNote, stepRefusal, takeStep } from './plan';
import { onOutputSubmitted } from './output';
import { catalogTools, engineToolsInScope, invokeRefusal, loadRefusal, toolScopeRefusal, toolsInScope } from './scope';
import { afterInvocation, onInvocationAllowed, unstarted } from './spending';
import type { PolicyState, Reduction, ToolCall, ToolOutcome } from './types';
import { allow, refuse, violation } from './verdicts';

/** Tool calls: which the model may make now, what the engine's own tools mean, and what a finished one changed. */

const stringField = (input: unknown, key: string): string | undefined => {
  const value = (input as Record<string, unknown> | null)?.[key];
  return typeof value === 'string' ? value : undefined;
};

export function onToolRequested(state: PolicyState, call: ToolCall, at: number, tokens = 0): Reduction {
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
    case SkillToolName.invokeSkill: {
      // Without a skill name, the tool's own input check answers (and starts nothing).
      const name = stringField(call.input, 'skill');
      if (name === undefined) return allow(state);
      const refusal = invokeRefusal(state, name);
      if (!refusal) return onInvocationAllowed(state, name, tokens);
      return refusal.violation ? violation(state, refusal.message) : refuse(state, refusal.message);
    }
    case SkillToolName.submitOutput:
      return onOutputSubmitted(state, call.input);
    case humanApprovalToolName:
      return onCheckpointRequested(state, call, at);
    default:
      return onRegisteredToolRequested(state, call, at);
  }
}

/**
 * Any other tool: the engine's own are allowed when the run has them (a skill run has not all). A call of a registered tool is refused when there is no such tool, a violation when the active skill does not grant
 * it, refused with every problem named when its input does not validate; else allowed with the validated input
 * (defaults filled in), after a human's approval when the tool needs one.
 */
function onRegisteredToolRequested(state: PolicyState, call: ToolCall, at: number): Reduction {
  if (engineToolsInScope(state).includes(call.name)) return allow(state);
  const tools = toolsInScope(state);
  if (!catalogTools(state).some((tool) => tool.name === call.name))
    return refuse(state, `There is no tool named "${call.name}". Available tools: ${tools.join(', ')}.`);
  if (!tools.includes(call.name)) return violation(state, toolScopeRefusal(state, call.name));
  // The workflow reads a granted tool's detail before it asks (only a catalog read by reference lacks any).
  const spec = state.tools.find((tool) => tool.name === call.name);
  if (!spec) return refuse(state, `${call.name} was not run: its definition has not been read. Call it again.`);
  const checked = validateJson(call.input, spec.inputSchema, { applyDefaults: true });
  if (!checked.ok) {
    const listed = checked.problems.map((problem) => problem.message).join('; ');
    return refuse(
      state,
      `${spec.name} was not run: its input is not valid: ${listed}. Fix the input and call it again.`,
      'refused',
      checked.problems,
    );
  }
  const input = checked.value as Record<string, unknown>;
  return spec.needsApproval ? onToolApprovalNeeded(state, call, spec, input, at) : allow(state, { input });
}

export function onToolFinished(state: PolicyState, call: ToolCall, outcome: ToolOutcome, at: number): Reduction {
  switch (outcome.kind) {
    case 'skill.loaded': {
      const { manifest } = outcome;
      // A reload of the skill in progress keeps its position; any other skill starts its own plan.
      const plan =
        isUnfinished(state.plan) && state.plan.skill === manifest.name ? state.plan : startSkillPlan(manifest, at);
      const next = activate(
        { ...state, plan, route: null, instructions: { ...state.instructions, skill: call.id } },
        manifest,
        at,
      );
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
    case 'skill.unstarted':
      return unstarted(state, call);
    case 'skill.invoked': {
      const invocations = afterInvocation(state.invocations, outcome.runs ?? 0);
      return allow({
        ...state,
        delegated: null,
        checkpointCount: Math.max(state.checkpointCount, outcome.checkpointCount),
        invocations,
      });
    }
    default:
      return allow(state);
  }
}
