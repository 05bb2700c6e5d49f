import type { ToolDefinition, ToolUseBlock } from '../core/messages';
import type { TurnEnding, TurnRun } from './turn-run';

export interface ToolOutcome {
  /** What the model sees as the tool_result. */
  content: string;
  isError: boolean;
  /** The result shown in the `tool.end` event when it differs from the content (e.g. structured data). */
  result?: unknown;
  /** The human cancelled: skip the remaining calls and end the turn. */
  cancelled?: boolean;
  /** A human decision was recorded: the round budget starts again. */
  humanDecision?: boolean;
  /** End the turn now, without another model call (an expired checkpoint whose policy is cancel). */
  endTurn?: TurnEnding;
}

export interface TurnTool {
  definition: ToolDefinition;
  /** Skill calls carry `isSkill`/`depth`/`input` on their tool events. */
  isSkill?: boolean;
  run(input: unknown, call: ToolUseBlock, run: TurnRun): Promise<ToolOutcome>;
}

export const toolError = (content: string): ToolOutcome => ({ content, isError: true });
export const toolOk = (content: string, result?: unknown): ToolOutcome => ({ content, isError: false, result });
