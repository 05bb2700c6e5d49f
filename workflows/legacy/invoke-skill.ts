import {
  CancellationScope,
  CancelledFailure,
  ChildWorkflowCancellationType,
  ChildWorkflowFailure,
  ParentClosePolicy,
  TerminatedFailure,
  TimeoutFailure,
  executeChild,
  isCancellation,
} from '@temporalio/workflow';
import { zeroUsage } from './core/model';
import { closedSkillRunEnding, type Closure } from './core/run/skill-result';
import type { Allowance, ToolCall } from './core/policy';
import type { SkillExecution } from './core/schemas/skill-runs';
import { skillRunWorkflowId, type SkillRunAllowance, type SkillRunInput, type SkillRunResult } from './core/skill-runs';
import {
  checkInvocation,
  invokeSkillDefinition,
  type Invocation,
  type InvocationResult,
  type SkillManifest,
} from './core/skills';
import { engineToolSpec } from './core/tools';
import { workflowTypes, type SkillRunWorkflow } from './definitions';
import { searchAttributes } from './search-attributes';
import { mirrorCheckpoint } from './skill-progress';
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
  const startedAt = Date.now();
  const record = startRecord(run, workflowId, call.id, invocation, startedAt);
  run.children.set(workflowId, { seq: 0, usage: zeroUsage(), forwarded: new Set() });

  let result: SkillRunResult;
  try {
    result = await executeChild<SkillRunWorkflow>(workflowTypes.skillRun, {
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
  } catch (err) {
    // This run is being cancelled: the skill run was cancelled with it, and the cancellation goes on up.
    if (CancellationScope.current().consideredCancelled) throw err;
    result = failedRun(invocation.skill, err);
  }
  // A run that ended without saying so (terminated, cancelled by hand) may leave its checkpoint mirrored here.
  mirrorCheckpoint(run, null, workflowId, result.checkpointCount);
  run.decide({
    type: 'tool.finished',
    at: Date.now(),
    call,
    outcome: { kind: 'skill.invoked', checkpointCount: result.checkpointCount, runs: result.skills.length },
  });
  run.setChildUsage(workflowId, result.usage);
  run.recordSkillRuns([...result.skills, endRecord(record, result, Date.now())]);
  // This run was asked to cancel while the skill run ran (which was cancelled with it and returned): it ends cancelled
  // now, its records kept, instead of answering the call and starting another model round.
  if (run.cancelRequested())
    throw new CancelledFailure(`The run was cancelled while the skill run of ${invocation.skill} ran.`);
  const answer: InvocationResult = {
    skill_id: invocation.skill,
    output: result.output,
    success: result.success,
    ...(result.success
      ? {}
      : {
          error:
            result.error?.message ?? `Skill ${invocation.skill} did not finish (${result.reason ?? result.status}).`,
        }),
  };
  return { content: JSON.stringify(answer), isError: !result.success, result: answer };
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
  const record: SkillExecution = {
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
  run.recordSkillRuns([record]);
  return record;
}

function endRecord(record: SkillExecution, result: SkillRunResult, endedAt: number): SkillExecution {
  return {
    ...record,
    status: result.status,
    endedAt: new Date(endedAt).toISOString(),
    durationMs: endedAt - Date.parse(record.startedAt),
    output: result.success ? result.output : null,
    error: result.success
      ? null
      : (result.error ?? { code: result.reason ?? result.status, message: `Skill ${result.skill} did not finish.` }),
    usage: result.usage,
  };
}

/** A skill run that ended without a result of its own: failed, terminated or timed out in Temporal, or cancelled by hand. */
function failedRun(skill: string, err: unknown): SkillRunResult {
  const base = { skill, success: false, output: null, usage: zeroUsage(), checkpointCount: 0, skills: [] };
  return { ...base, ...closedSkillRunEnding(skill, closureOf(err, `The skill run of ${skill}`)) };
}

/** How Temporal closed a child run, from the failure its result threw. */
function closureOf(err: unknown, what: string): Closure {
  const cause = err instanceof ChildWorkflowFailure ? err.cause : err;
  if (isCancellation(err) || isCancellation(cause)) return { kind: 'cancelled' };
  if (cause instanceof TerminatedFailure) return { kind: 'terminated' };
  if (cause instanceof TimeoutFailure) return { kind: 'timed_out' };
  return { kind: 'failed', message: publicError(cause, what).message };
}
