import { isCancellation } from '@temporalio/workflow';
import type { ToolResultBlock, ToolUseBlock } from '../core/messages';
import { tokensOf } from '../core/model';
import type { Allowance, CheckpointPlan, End } from '../core/policy';
import { cutCallAnswer } from '../core/run/cancel';
import { callCommand, type CallCommand } from '../core/run/verdicts';
import { askHuman } from './checkpoint-desk';
import { skillCallOf } from './skill-call-event';
import { publicError } from './internal-errors';
import { readGrantedDetails } from './tool-details';
import { toolError, type AnsweredCall, type ToolAnswer, type TurnTool } from './tool-types';
import type { TurnRun } from './turn-run';

export interface DispatchResult {
  results: ToolResultBlock[];
  /** The policy ended the turn during these calls (a cancel, an expiry, too many violations). */
  end?: End;
}

const skipped = JSON.stringify({ skipped: 'turn cancelled' });

/**
 * Answers every tool call of a response, in order, as the policy rules: a refused call is an error result the model
 * sees, an allowed one runs (or asks a human), and once the policy ends the turn the remaining calls are skipped.
 */
export async function dispatchToolCalls(
  calls: ToolUseBlock[],
  tools: Map<string, TurnTool>,
  run: TurnRun,
): Promise<DispatchResult> {
  const results: ToolResultBlock[] = [];
  let end: End | undefined;
  for (const call of calls) {
    if (end) {
      results.push({ type: 'tool_result', tool_use_id: call.id, content: skipped });
      continue;
    }
    // A skill loaded earlier in this response may have granted the tool: its detail is read before anything shows.
    await readGrantedDetails(run);
    const tool = tools.get(call.name);
    const skill = skillCallOf(call, run.depth);
    const name = skill?.name ?? call.name;
    const origin = tool ? { source: tool.spec.source, ...(tool.spec.server ? { server: tool.spec.server } : {}) } : {};
    const skillDepth = skill?.depth !== undefined ? { depth: skill.depth } : {};
    run.emit({
      type: 'tool.start',
      name,
      args: call.input,
      callId: call.id,
      ...(skill ? { isSkill: true, ...skillDepth, input: skill.input } : {}),
      ...origin,
    });
    const verdict = run.decide({
      type: 'tool.requested',
      at: Date.now(),
      call: { id: call.id, name: call.name, input: call.input },
      tokens: tokensOf(run.state.usage),
    });
    const toolEnd = (answer: ToolAnswer) =>
      run.emit({
        type: 'tool.end',
        name,
        result: answer.result ?? answer.content,
        callId: call.id,
        isError: answer.isError,
        ...(skill ? { isSkill: true, ...skillDepth } : {}),
        ...origin,
      });
    let answered: AnsweredCall;
    try {
      answered = await carryOut(callCommand(verdict, call.input), tool, call, run);
    } catch (err) {
      // The run was cancelled while it answered the call (a skill run, a checkpoint, an activity): the call ends too.
      if (isCancellation(err)) toolEnd(cutCallAnswer);
      throw err;
    }
    const { answer, ends } = answered;
    toolEnd(answer);
    results.push({
      type: 'tool_result',
      tool_use_id: call.id,
      content: answer.content,
      ...(answer.isError ? { is_error: true } : {}),
    });
    end = ends;
  }
  return { results, end };
}

/** Answers a call as the policy ruled it: refused, the run's end, a human asked first, or the tool run. */
async function carryOut(
  command: CallCommand,
  tool: TurnTool | undefined,
  call: ToolUseBlock,
  run: TurnRun,
): Promise<AnsweredCall> {
  switch (command.kind) {
    case 'refuse_call':
      return { answer: command.answer };
    case 'end_on_call':
      return { answer: command.answer, ends: command.end };
    case 'ask_human':
      return askThenRun(run, command.checkpoint, tool, call);
    case 'run_tool':
      return { answer: await runTool(tool, { ...call, input: command.input }, run, command.allowance) };
  }
}

/** A checkpoint first (request_human_approval, or a tool that needs approval); an approved tool then runs. */
async function askThenRun(
  run: TurnRun,
  ask: CheckpointPlan,
  tool: TurnTool | undefined,
  call: ToolUseBlock,
): Promise<AnsweredCall> {
  const outcome = await askHuman(run, ask);
  switch (outcome.kind) {
    case 'answered':
      return { answer: outcome.answer };
    case 'ended':
      return { answer: outcome.answer, ends: outcome.end };
    case 'approved': {
      const answer = await runTool(tool, { ...call, input: outcome.input }, run);
      const { note } = outcome;
      return { answer: note ? { ...answer, content: `${note}\n\n${answer.content}` } : answer };
    }
  }
}

async function runTool(
  tool: TurnTool | undefined,
  call: ToolUseBlock,
  run: TurnRun,
  allowance: Allowance | null = null,
): Promise<ToolAnswer> {
  if (!tool?.run) return toolError(`${call.name} cannot be run here.`);
  try {
    return await tool.run({ id: call.id, name: call.name, input: call.input }, run, allowance ?? undefined);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return toolError(`${call.name} failed: ${publicError(err, `Tool ${call.name}`).message}`);
  }
}
