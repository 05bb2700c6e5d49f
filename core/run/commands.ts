import type { CheckpointDecision, PendingCheckpoint } from '../checkpoints';
import type { TurnEventBody } from '../events';
import type { Usage } from '../model';
import type { End } from '../policy/types';
import type { SkillExecution } from '../schemas/skill-runs';
import type { RunState } from './state';

/** What the model gets back for one tool call. */
export interface ToolAnswer {
  content: string;
  isError: boolean;
  /** The result shown in the `tool.end` event when it differs from the content (structured data). */
  result?: unknown;
}

/** What an answer (or the expiry) of the run's own checkpoint means for the tool call that asked it. */
export type CheckpointOutcome =
  /** The call is answered with the decision, a skip, or a refusal. */
  | { kind: 'answered'; answer: ToolAnswer }
  /** A human approved a tool call: it runs with this input; the note (what the human changed or said) goes first. */
  | { kind: 'approved'; input: Record<string, unknown>; note: string | null }
  /** The answer ends the run (a cancel, an expiry that cancels): the call's answer, then the end as the policy rules. */
  | { kind: 'ended'; answer: ToolAnswer; end: End };

/**
 * What workflow code carries out for the run machine, in order. Each kind carries exactly what its effect needs.
 * (The loop's commands are core/run/loop.ts's LoopCommand until the two merge.)
 */
export type RunCommand =
  /** Show this checkpoint as the one the run waits at (asked by a skill run below: `askedBy`), or none. */
  | { kind: 'show_checkpoint'; checkpoint: PendingCheckpoint | null; askedBy: string | null }
  | { kind: 'set_status'; status: 'running' | 'waiting' }
  /** The plan's position may have moved: publish it (turn state, step event, search attributes). */
  | { kind: 'publish_position' }
  | { kind: 'emit'; event: TurnEventBody }
  /** Events a skill run below emitted, appended as they are (with their depth) and passed on up. */
  | { kind: 'relay'; events: TurnEventBody[] }
  | { kind: 'pass_answer_down'; workflowId: string; decision: CheckpointDecision }
  /** A skill run's usage so far, counted into this run's. */
  | { kind: 'count_child_usage'; workflowId: string; usage: Usage }
  /** Execution records to add or replace (by workflow id). */
  | { kind: 'record_runs'; records: SkillExecution[] }
  /** The tool call waiting at the run's own checkpoint goes on with this. */
  | { kind: 'resume_call'; outcome: CheckpointOutcome }
  /** The answer to a tool call the run was carrying out (an invoke_skill whose skill run returned). */
  | { kind: 'reply_to_call'; answer: ToolAnswer }
  /** The run was asked to cancel: it stops here and ends cancelled. */
  | { kind: 'stop_cancelled'; message: string };

export interface RunStep {
  state: RunState;
  commands: RunCommand[];
}
