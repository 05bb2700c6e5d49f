import { isCancellation, patched } from '@temporalio/workflow';
import { cancelledCallResult } from './core/events';
import type { ToolResultBlock, ToolUseBlock } from './core/messages';
import { tokensOf } from './core/model';
import { separatePatches, type Allowance, type CheckpointPlan, type End, type Verdict } from './core/policy';
import { endedCallMessage } from './core/run/endings';
import { askHuman } from './checkpoint-desk';
import { skillCallOf } from './skill-call-event';
import { publicError } from './internal-errors';
import { readGrantedDetails } from './tool-details';
import { toolError, type AnsweredCall, type ToolAnswer, type TurnTool } from './tool-types';
import type { TurnRun, WaitingCall } from './turn-run';

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
    const skill = run.policy.rules.spendingBounds ? skillCallOf(call, run.depth) : tool?.skillCall?.(call, run);
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
    const callEvent = { name, ...(skill ? { isSkill: true as const, ...skillDepth } : {}), ...origin };
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
      answered =
        verdict.kind === 'allow' && verdict.ask
          ? await askThenRun(run, verdict.ask, tool, call, {
              callEvent,
              earlier: [...results],
              later: calls.slice(calls.indexOf(call) + 1),
            })
          : await answerOf(verdict, tool, call, run);
    } catch (err) {
      // The run was cancelled while it answered the call (a skill run, a checkpoint, an activity): the call ends too.
      if (isCancellation(err) && patched(separatePatches.cancelEndsToolCalls))
        toolEnd({ content: JSON.stringify(cancelledCallResult), isError: true, result: cancelledCallResult });
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

/** The tool result for a call the policy refused, ended the turn on, or allowed to run (with the input it allowed). */
async function answerOf(
  verdict: Verdict,
  tool: TurnTool | undefined,
  call: ToolUseBlock,
  run: TurnRun,
): Promise<AnsweredCall> {
  if (verdict.kind === 'refuse') return { answer: toolError(verdict.message) };
  if (verdict.kind === 'end') return { answer: toolError(endedCallMessage(verdict.ending)), ends: verdict };
  return { answer: await runTool(tool, { ...call, input: verdict.input ?? call.input }, run, verdict.handDown) };
}

/** A checkpoint first (request_human_approval, or a tool that needs approval); an approved tool then runs. */
async function askThenRun(
  run: TurnRun,
  ask: CheckpointPlan,
  tool: TurnTool | undefined,
  call: ToolUseBlock,
  around: Omit<WaitingCall, 'ask' | 'call'>,
): Promise<AnsweredCall> {
  run.waitingCall = { ask, call, ...around };
  let asked: AnsweredCall;
  try {
    asked = await askHuman(run, ask);
  } finally {
    run.waitingCall = undefined;
  }
  if (!asked.approved) return asked;
  const answer = await runTool(tool, { ...call, input: asked.approved.input }, run);
  const { note } = asked.approved;
  return { answer: note ? { ...answer, content: `${note}\n\n${answer.content}` } : answer };
}

async function runTool(
  tool: TurnTool | undefined,
  call: ToolUseBlock,
  run: TurnRun,
  handDown?: Allowance,
): Promise<ToolAnswer> {
  if (!tool?.run) return toolError(`${call.name} cannot be run here.`);
  try {
    return await tool.run({ id: call.id, name: call.name, input: call.input }, run, handDown);
  } catch (err) {
    if (isCancellation(err)) throw err;
    return toolError(`${call.name} failed: ${publicError(err, `Tool ${call.name}`).message}`);
  }
}
