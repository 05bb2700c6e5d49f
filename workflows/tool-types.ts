import type { End, ToolCall } from '../core/policy';
import type { ToolSpec } from '../core/tools';
import type { TurnRun } from './turn-run';

/** What the model gets back for one tool call. */
export interface ToolAnswer {
  content: string;
  isError: boolean;
  /** The result shown in the `tool.end` event when it differs from the content (e.g. structured data). */
  result?: unknown;
}

/** How a skill call shows in its tool events (seed 003): the skill's name, the depth it runs at, and its input. */
export interface SkillCallEvent {
  name: string;
  depth: number;
  input: unknown;
}

export interface TurnTool {
  /** The tool as the model sees it and as the policy scopes it (core/tools). */
  spec: ToolSpec;
  /** Skill calls (invoke_skill, load_skill) carry `isSkill`, `depth` and `input` on their tool events. */
  skillCall?(call: ToolCall, run: TurnRun): SkillCallEvent;
  /** Absent for a tool the policy answers itself: request_human_approval, whose allow names the checkpoint to ask. */
  run?(call: ToolCall, run: TurnRun): Promise<ToolAnswer>;
}

/** A tool call answered: its result for the model, and the end of the turn when the policy ended it there. */
export interface AnsweredCall {
  answer: ToolAnswer;
  ends?: End;
  /** A human approved the call of a registered tool: run it with this input, and tell the model the note. */
  approved?: { input: Record<string, unknown>; note?: string };
}

export const toolError = (content: string): ToolAnswer => ({ content, isError: true });
