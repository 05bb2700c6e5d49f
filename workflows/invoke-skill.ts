import {
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  executeChild,
  isCancellation,
} from '@temporalio/workflow';
import { zeroUsage } from '../core/model';
import { childReturned, childStarted, type ChildOutcome } from '../core/run/children';
import type { Closure } from '../core/run/skill-result';
import type { Allowance, ToolCall } from '../core/policy';
import type { SkillExecution } from '../core/schemas/skill-runs';
import { skillRunWorkflowId, type SkillRunAllowance, type SkillRunInput } from '../core/skill-runs';
import { checkInvocation, invokeSkillDefinition, type Invocation, type SkillManifest } from '../core/skills';
import { engineToolSpec } from '../core/tools';
import { workflowTypes, type SkillRunWorkflow } from './definitions';
import { searchAttributes } from './search-attributes';
import type { SkillCallEvent, ToolAnswer, TurnTool } from './tool-types';
import type { TurnRun } from './turn-run';
import { publicError } from './internal-errors';
import { invokeSkillCallOf } from './skill-call-event';

/**
 * invoke_skill: the policy has allowed the skill (scope, depth); the input is checked (task, history, params against
 * the skill's declared parameters) before anything starts; then the skill runs as a child workflow of this run, with a
 * fresh conversation, and its outcome comes back as seed 002's `{skill_id, output, success}` (`error` on failure).
 * Cancelling this run cancels the skill run (and the ones under it) too.
 */
export function invokeSkillTool(catalog: SkillManifest[], invocable: SkillManifest[]): TurnTool {
  return {
    spec: engineToolSpec(invokeSkillDefinition(invocable), 'skill', 'child-workflow'),
    skillCall: skillCallEvent,
    run: (call, run, handDown) => invokeSkill(catalog, call, run, handDown),
  };
}

const skillCallEvent = (call: ToolCall, run: TurnRun): SkillCallEvent => invokeSkillCallOf(call, run.depth);

async function invokeSkill(
  catalog: SkillManifest[],
  call: ToolCall,
  run: TurnRun,
  handDown?: Allowance,
): Promise<ToolAnswer> {
  const checked = checkInvocation(call.input, catalog);
  if (!checked.ok) {
    run.decide({ type: 'tool.finished', at: Date.now(), call, outcome: { kind: 'skill.unstarted' } });
    return { content: JSON.stringify(checked.result), isError: true, result: checked.result };
  }
  const { invocation } = checked;
  const workflowId = skillRunWorkflowId(run.input.turnId, invocation.skill, call.id);
  const record = startRecord(run, workflowId, call.id, invocation, Date.now());
  run.step((state) => childStarted(state, workflowId, record));

  let outcome: ChildOutcome;
  try {
    const result = await executeChild<SkillRunWorkflow>(workflowTypes.skillRun, {
      workflowId,
      // The turn's cancel (or termination, or timeout) reaches every skill run under it, which ends as cancelled.
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      typedSearchAttributes: [
        { key: searchAttributes.session, value: run.input.sessionId },
        { key: searchAttributes.user, value: run.input.userId },
        { key: searchAttributes.status, value: 'running' },
        { key: searchAttributes.skill, value: invocation.skill },
        { key: searchAttributes.depth, value: String(record.depth) },
        { key: searchAttributes.turn, value: run.place.rootTurnId },
      ],
      memo: { task: invocation.task, params: invocation.params },
      args: [skillRunInput(run, call, invocation, record.depth, handDown)],
    });
    outcome = { kind: 'result', result };
  } catch (err) {
    outcome = { kind: 'closed', closure: closureOf(err, `The skill run of ${invocation.skill}`) };
  }
  // What the return means (the call's answer, or the run's stop when it was asked to cancel) is the run machine's.
  const lead = run.step((state) => childReturned(state, { workflowId, call, outcome, at: Date.now() }));
  if (lead?.kind !== 'reply_to_call')
    throw new Error(`The return of skill run ${workflowId} left its call unanswered.`);
  return lead.answer;
}

function skillRunInput(
  run: TurnRun,
  call: ToolCall,
  invocation: Invocation,
  depth: number,
  handDown: Allowance | undefined,
): SkillRunInput {
  const { input } = run;
  const allowance = handDown && allowanceOf(run, handDown);
  return {
    workflowId: skillRunWorkflowId(input.turnId, invocation.skill, call.id),
    rootTurnId: run.place.rootTurnId,
    parentWorkflowId: input.turnId,
    callId: call.id,
    sessionId: input.sessionId,
    userId: input.userId,
    createdAt: new Date().toISOString(),
    settings: input.settings,
    ...(input.requestId ? { requestId: input.requestId } : {}),
    skill: invocation.skill,
    task: invocation.task,
    history: invocation.history,
    params: invocation.params,
    depth,
    checkpointBase: run.policy.checkpointCount,
    // A run that read its catalog by reference hands on the headers; its skill run reads the detail its skill grants.
    tools: run.policy.headers
      ? { headers: run.policy.headers, rootGrants: [] }
      : { tools: run.policy.tools, rootGrants: [] },
    ...(allowance ? { allowance } : {}),
  };
}

/** What the policy hands down, with the day of the ledger the run reserves in (the tokens go with it). */
function allowanceOf(run: TurnRun, handDown: Allowance): SkillRunAllowance {
  const day = run.ledgerScope?.day;
  return {
    invocations: handDown.invocations,
    ...(handDown.tokens !== null && day ? { tokens: { left: handDown.tokens, day } } : {}),
  };
}

function startRecord(
  run: TurnRun,
  workflowId: string,
  callId: string,
  invocation: Invocation,
  startedAt: number,
): SkillExecution {
  return {
    workflowId,
    parentWorkflowId: run.input.turnId,
    callId,
    skill: invocation.skill,
    depth: run.depth + 1,
    status: 'running',
    task: invocation.task,
    params: invocation.params,
    startedAt: new Date(startedAt).toISOString(),
    endedAt: null,
    durationMs: null,
    output: null,
    error: null,
    usage: zeroUsage(),
  };
}

/** How Temporal closed a child run, from the failure its result threw. */
function closureOf(err: unknown, what: string): Closure {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (isCancellation(err) || isCancellation(cause)) return { kind: 'cancelled' };
  if (cause instanceof TerminatedFailure) return { kind: 'terminated' };
  if (cause instanceof TimeoutFailure) return { kind: 'timed_out' };
  return { kind: 'failed', message: publicError(cause, what).message };
}
