import { isCancellation } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../core/messages';
import type { TurnEnding, TurnRun } from './turn-run';
import { toolError, type ToolOutcome, type TurnTool } from './tool-types';

export interface DispatchResult {
  results: ToolResultBlock[];
  cancelled: boolean;
  humanDecision: boolean;
  endTurn?: TurnEnding;
}

const skipped = JSON.stringify({ skipped: 'turn cancelled' });

/**
 * Answers every tool call of a response, in order. Unknown tools and failing tools become error results the model
 * sees; after a cancel the remaining calls are answered as skipped.
 */
export async function dispatchToolCalls(calls: ToolUseBlock[], tools: Map<string, TurnTool>, run: TurnRun): Promise<DispatchResult> {
  const results: ToolResultBlock[] = [];
  let cancelled = false;
  let humanDecision = false;
  let endTurn: TurnEnding | undefined;
  for (const call of calls) {
    if (cancelled || endTurn) {
      results.push({ type: 'tool_result', tool_use_id: call.id, content: skipped });
      continue;
    }
    const tool = tools.get(call.name);
    const skill = tool?.isSkill ? { isSkill: true, depth: 1, input: call.input } : {};
    run.emit({ type: 'tool.start', name: call.name, args: call.input, callId: call.id, ...skill });
    const outcome = tool ? await runSafely(tool, call, run) : unknownTool(call.name, tools);
    run.emit({
      type: 'tool.end',
      name: call.name,
      result: outcome.result ?? outcome.content,
      callId: call.id,
      isError: outcome.isError,
      ...(tool?.isSkill ? { isSkill: true, depth: 1 } : {}),
    });
    results.push({ type: 'tool_result', tool_use_id: call.id, content: outcome.content, ...(outcome.isError ? { is_error: true } : {}) });
    cancelled = outcome.cancelled === true;
    endTurn = outcome.endTurn;
    humanDecision ||= outcome.humanDecision === true;
  }
  return { results, cancelled, humanDecision, endTurn };
}

async function runSafely(tool: TurnTool, call: ToolUseBlock, run: TurnRun): Promise<ToolOutcome> {
  try {
    return await tool.run(call.input, call, run);
  } catch (err) {
    if (isCancellation(err)) throw err;
    const message = err instanceof Error ? err.message : String(err);
    return toolError(`${call.name} failed: ${message}`);
  }
}

function unknownTool(name: string, tools: Map<string, TurnTool>): ToolOutcome {
  return toolError(`There is no tool named "${name}". Available tools: ${[...tools.keys()].join(', ') || 'none'}.`);
}
