import { submitOutputDefinition } from './core/skills';
import { engineToolSpec } from './core/tools';
import type { TurnTool } from './tool-types';

/**
 * submit_output: the policy has checked the output against the active skill's declared schema (and refused it with
 * every problem otherwise), and passes it on validated, defaults filled in; here it becomes the turn's artifact (an
 * `artifact` event, and `artifacts` in the turn).
 */
export const submitOutputTool: TurnTool = {
  spec: engineToolSpec(submitOutputDefinition, 'skill'),
  async run(call, run) {
    const skill = run.policy.active?.name ?? 'output';
    run.emitArtifact(skill, (call.input as { output: unknown }).output, call.id);
    const result = { accepted: true, skill };
    return { content: JSON.stringify(result), isError: false, result };
  },
};
