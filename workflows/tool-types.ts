import type { Allowance, End, ToolCall } from '../core/policy';
import type { ToolHeader, ToolSpec } from '../core/tools';
import type { ToolAnswer } from '../core/run/commands';
import type { TurnRun } from './turn-run';

export type { ToolAnswer };

/**
 * How a skill call shows in its tool events (seed 003): the skill's name, the depth it runs at, and its input. No
 * depth: it loads the skill into the run itself (load_skill, whose events carry the run's own depth, none in a turn).
 */
export interface SkillCallEvent {
  name: string;
  depth?: number;
  input: unknown;
}

export interface TurnTool {
  /**
   * The tool as the model sees it and as the policy scopes it (core/tools); a registered tool of a run that read its
   * catalog by reference has its header only (the model is offered its detail from the policy's state once granted).
   */
  spec: ToolSpec | ToolHeader;
  /**
   * Skill calls (invoke_skill, load_skill) carry `isSkill`, `depth` and `input` on their tool events: so in runs of code
   * before spending bounds; later runs describe them by the call's name alone (skill-call-event.ts).
   */
  skillCall?(call: ToolCall, run: TurnRun): SkillCallEvent;
  /**
   * Absent for a tool the policy answers itself: request_human_approval, whose allow names the checkpoint to ask.
   * `handDown`: what an allowed invoke_skill's skill run may spend, as the policy decided.
   */
  run?(call: ToolCall, run: TurnRun, handDown?: Allowance): Promise<ToolAnswer>;
}

/** A tool call answered: its result for the model, and the end of the turn when the policy ended it there. */
export interface AnsweredCall {
  answer: ToolAnswer;
  ends?: End;
}

export const toolError = (content: string): ToolAnswer => ({ content, isError: true });
