import type { PendingCheckpoint } from '../checkpoints';
import { zeroUsage } from '../model';
import { reducePolicy } from '../policy/reduce';
import type { ToolCall } from '../policy/types';
import type { SkillExecution } from '../schemas/skill-runs';
import type { SkillProgress, SkillRunResult } from '../skill-runs';
import type { InvocationResult } from '../skills/invocation';
import type { RunCommand, RunStep, ToolAnswer } from './commands';
import { closedSkillRunEnding, type Closure } from './skill-result';
import type { RunState } from './state';

/**
 * The skill runs a run invokes, as the run machine sees them: one starts, tells its progress (its events, the
 * checkpoint it waits at, its usage and records), and returns (its result, or how Temporal closed it). What each means
 * for this run is decided here: what is relayed, which checkpoint is shown, what the invoke_skill call answers, and
 * that a run asked to cancel runs no more.
 */

/** A skill run it invoked: how the run that returned came back. */
export type ChildOutcome = { kind: 'result'; result: SkillRunResult } | { kind: 'closed'; closure: Closure };

export interface ChildReturned {
  workflowId: string;
  /** The invoke_skill call it answers. */
  call: ToolCall;
  outcome: ChildOutcome;
  at: number;
}

/** The run was asked to cancel (its workflow was, or its turn's): from now on it runs no more. */
export const cancelRequested = (state: RunState): RunState => ({ ...state, cancelling: true });

/** A skill run started, with its record as the run shows it (running). */
export function childStarted(state: RunState, workflowId: string, record: SkillExecution): RunStep {
  const children = { ...state.children, [workflowId]: { seq: 0, usage: zeroUsage(), record } };
  return { state: { ...state, children }, commands: [{ kind: 'record_runs', records: [record] }] };
}

/** A skill run's progress, taken once and in order: its events, usage and records, and the checkpoint it waits at. */
export function childProgressed(state: RunState, progress: SkillProgress): RunStep {
  const child = state.children[progress?.workflowId];
  if (!child || progress.seq <= child.seq) return { state, commands: [] };
  const { workflowId } = progress;
  const running = !child.record.endedAt;
  const record = running ? { ...child.record, status: progress.status, usage: progress.usage } : child.record;
  const children = { ...state.children, [workflowId]: { seq: progress.seq, usage: progress.usage, record } };
  const shown = progress.pendingCheckpoint;
  const pending = shown && !state.forwarded.includes(shown.id) ? shown : null;
  const mirrored = mirror({ ...state, children }, pending, workflowId, progress.checkpointCount);
  return {
    state: mirrored.state,
    commands: [
      { kind: 'relay', events: progress.events },
      { kind: 'count_child_usage', workflowId, usage: progress.usage },
      { kind: 'record_runs', records: [...progress.skills, ...(running ? [record] : [])] },
      ...mirrored.commands,
    ],
  };
}

/**
 * A skill run returned, or Temporal closed it: its checkpoint is no longer shown, the policy counts it, its usage and
 * records are kept, and the invoke_skill call gets its `{skill_id, output, success}`. A run asked to cancel stops
 * instead: at once when its skill run was cancelled with it, after keeping its records when that run returned anyway.
 */
export function childReturned(state: RunState, returned: ChildReturned): RunStep {
  const { workflowId, call, outcome, at } = returned;
  const { record } = state.children[workflowId];
  const stop: RunCommand = {
    kind: 'stop_cancelled',
    message: `The run was cancelled while the skill run of ${record.skill} ran.`,
  };
  if (outcome.kind === 'closed' && state.cancelling) return { state, commands: [stop] };
  const result = outcome.kind === 'result' ? outcome.result : closedResult(record.skill, outcome.closure);
  const cleared = mirror(state, null, workflowId, result.checkpointCount);
  const policy = reducePolicy(cleared.state.policy, {
    type: 'tool.finished',
    at,
    call,
    outcome: { kind: 'skill.invoked', checkpointCount: result.checkpointCount, runs: result.skills.length },
  }).state;
  const ended = endRecord(record, result, at);
  const child = { ...cleared.state.children[workflowId], usage: result.usage, record: ended };
  const next = { ...cleared.state, policy, children: { ...cleared.state.children, [workflowId]: child } };
  return {
    state: next,
    commands: [
      ...cleared.commands,
      { kind: 'count_child_usage', workflowId, usage: result.usage },
      { kind: 'record_runs', records: [...result.skills, ended] },
      state.cancelling ? stop : { kind: 'reply_to_call', answer: invocationAnswer(result) },
    ],
  };
}

/**
 * Shows the checkpoint a skill run waits at as this run's pending one (or clears it), with the status to match; the
 * policy learns at once that it is gone, so an answer to it meanwhile is refused. A run asked to cancel keeps showing
 * the checkpoint, and its status, until its ending publishes `cancelled` with none.
 */
function mirror(
  state: RunState,
  pending: PendingCheckpoint | null,
  workflowId: string,
  checkpointCount: number,
): RunStep {
  const changed = (state.mirrored?.checkpoint.id ?? null) !== (pending?.id ?? null);
  if (!changed && checkpointCount <= state.policy.checkpointCount) return { state, commands: [] };
  const delegated = { type: 'checkpoint.delegated', checkpoint: pending, checkpointCount } as const;
  const next = { ...state, policy: reducePolicy(state.policy, delegated).state };
  if (!changed || (!pending && state.cancelling)) return { state: next, commands: [] };
  return {
    state: { ...next, mirrored: pending ? { workflowId, checkpoint: pending } : null },
    commands: [
      { kind: 'show_checkpoint', checkpoint: pending, askedBy: pending ? workflowId : null },
      { kind: 'set_status', status: pending ? 'waiting' : 'running' },
    ],
  };
}

/** A skill run that ended without a result of its own: failed, terminated or timed out in Temporal, or cancelled by hand. */
function closedResult(skill: string, closure: Closure): SkillRunResult {
  const base = { skill, success: false, output: null, usage: zeroUsage(), checkpointCount: 0, skills: [] };
  return { ...base, ...closedSkillRunEnding(skill, closure) };
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

/** What the invoke_skill call answers: seed 002's `{skill_id, output, success}`, with `error` when it did not succeed. */
function invocationAnswer(result: SkillRunResult): ToolAnswer {
  const answer: InvocationResult = {
    skill_id: result.skill,
    output: result.output,
    success: result.success,
    ...(result.success
      ? {}
      : {
          error: result.error?.message ?? `Skill ${result.skill} did not finish (${result.reason ?? result.status}).`,
        }),
  };
  return { content: JSON.stringify(answer), isError: !result.success, result: answer };
}
