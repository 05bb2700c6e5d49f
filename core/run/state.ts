import type { PendingCheckpoint } from '../checkpoints';
import type { Usage } from '../model';
import { newPolicyState } from '../policy/state';
import type { PolicyState } from '../policy/types';
import type { SkillExecution } from '../schemas/skill-runs';

/**
 * What a run (a turn or a skill run) knows beyond its policy, as plain JSON: the skill runs it invoked, the checkpoint
 * of one of them it shows as its own, and whether it was asked to cancel. The run machine's reducers (answers.ts,
 * children.ts) take it and give back a new one with the commands workflow code performs.
 */

/** A skill run this run invoked. */
export interface ChildState {
  /** The latest progress taken (1, 2, ...): a repeated or late one is ignored. */
  seq: number;
  /** Its usage so far, its own and its runs', counted into this run's. */
  usage: Usage;
  /** Its execution record as this run shows it (running until it returns). */
  record: SkillExecution;
}

/** The checkpoint of a skill run below that this run shows as its pending one, and the run that asks. */
export interface MirroredCheckpoint {
  workflowId: string;
  checkpoint: PendingCheckpoint;
}

export interface RunState {
  policy: PolicyState;
  /** By workflow id. */
  children: Record<string, ChildState>;
  mirrored: MirroredCheckpoint | null;
  /**
   * The checkpoints of skill runs below whose answers this run passed down (ids are unique in a turn): a skill run's
   * progress that still shows one, sent before the answer reached it, does not mirror it again.
   */
  forwarded: string[];
  /** The run was asked to cancel: it runs no more, and ends cancelled. */
  cancelling: boolean;
}

export const newRunState = (policy: PolicyState = newPolicyState()): RunState => ({
  policy,
  children: {},
  mirrored: null,
  forwarded: [],
  cancelling: false,
});
