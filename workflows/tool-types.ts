import type { ToolDefinition } from '../core/messages';
import type { End, ToolCall } from '../core/policy';
import type { TurnRun } from './turn-run';

/** What the model gets back for one tool call. */
export interface ToolAnswer {
  content: string;
  isError: boolean;
  /** The result shown in the `tool.end` event when it differs from the content (e.g. structured data). */
  result?: unknown;
}

export interface TurnTool {
  definition: ToolDefinition;
  /** Skill calls carry `isSkill`/`depth`/`input` on their tool events. */
  isSkill?: boolean;
  /** Absent for a tool the policy answers itself: request_human_approval, whose allow names the checkpoint to ask. */
  run?(call: ToolCall, run: TurnRun): Promise<ToolAnswer>;
}

/** A tool call answered: its result for the model, and the end of the turn when the policy ended it there. */
export interface AnsweredCall {
  answer: ToolAnswer;
  ends?: End;
}

export const toolError = (content: string): ToolAnswer => ({ content, isError: true });
