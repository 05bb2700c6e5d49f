import { reducePolicy } from '../policy/reduce';
import type { ToolCall } from '../policy/types';
import { checkParams } from '../skills/invocation';
import { SkillToolName } from '../skills/tool-names';
import type { SkillManifest } from '../skills/types';
import type { ToolAnswer } from './commands';
import { invalidParamsEnding, type Ending } from './endings';
import type { RunState } from './state';

/**
 * A turn started with a skill (the API's `skill`, perhaps with parameters) loads it first, as if the model had called
 * load_skill, ruled by the policy as that call would be.
 */

/** What the turn does with the skill it was started with. */
export type Preload =
  /** The parameters are not the skill's, or the policy ends the turn on the call: the turn ends before the model runs. */
  | { kind: 'end'; ending: Ending }
  /** Load the skill with this call (a load_skill the policy allowed). */
  | { kind: 'load'; call: ToolCall }
  /** The policy refused the load: the model is told why, in this note. */
  | { kind: 'note'; text: string };

export const preloadCallId = 'preload';

export function preload(
  state: RunState,
  manifest: SkillManifest | undefined,
  name: string,
  params: Record<string, unknown> | undefined,
  at: number,
): { state: RunState; preload: Preload } {
  const checked = manifest && params ? checkParams(manifest, params) : undefined;
  if (checked && !checked.ok)
    return { state, preload: { kind: 'end', ending: invalidParamsEnding(name, checked.problems) } };
  const call: ToolCall = { id: preloadCallId, name: SkillToolName.loadSkill, input: { name } };
  const { state: policy, verdict } = reducePolicy(state.policy, { type: 'tool.requested', at, call });
  const next = { ...state, policy };
  if (verdict.kind === 'end') return { state: next, preload: { kind: 'end', ending: verdict.ending } };
  if (verdict.kind === 'refuse')
    return { state: next, preload: { kind: 'note', text: notLoaded(name, verdict.message) } };
  return { state: next, preload: { kind: 'load', call } };
}

/** The note that tells the model what became of the load: the skill's instructions and the parameters, or the error. */
export function preloadedNote(name: string, loaded: ToolAnswer, params: Record<string, unknown> | undefined): string {
  if (loaded.isError) return notLoaded(name, loaded.content);
  const given = params
    ? `\n\nThe user gave these parameters for it: ${JSON.stringify(params)}. Use them; its checkpoints propose them to the human.`
    : '';
  return `The skill ${name} is loaded for this turn:\n\n${loaded.content}${given}`;
}

const notLoaded = (name: string, why: string) => `The skill ${name} could not be loaded: ${why}`;
