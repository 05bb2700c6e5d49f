import type { CheckpointSpec, DeadlineSpec, SkillRef, SkillSnapshot } from '../skills/types';
import type { PlanAutomaton, PlanState } from '../skills/plan-automaton';

/** A skill's declared plan as a state machine the model cannot talk its way around. */
export interface ActivePlan {
  skill: string;
  automaton: PlanAutomaton;
  position: PlanState;
  /** The step or checkpoint taken last; null before the first. */
  current: string | null;
  stepRuns: Record<string, number>;
  stepLimits: Record<string, number>;
  checkpoints: CheckpointSpec[];
  deadlines: DeadlineSpec[];
  /** Epoch ms at which the plan jumps, and where to; set when the deadline's source checkpoint is resolved. */
  deadline: { atMs: number; jumpTo: string } | null;
  deadlinePassed: boolean;
}

/** A routing checkpoint's outcome: the skill the human chose (null: stop, only the final answer is allowed). */
export interface Route {
  skill: string | null;
  from: string;
}

/** What a turn hands the session when it ends with a plan in progress (or a routing choice still to act on). */
export interface PlanCarry {
  version: 3;
  plan: ActivePlan | null;
  route: Route | null;
  /**
   * The pinned skills the plan needs, by name and hash, so the next turn serves the same content: it reads them back
   * (in its start activity) into `snapshots` when it starts.
   */
  skills: SkillRef[];
  /**
   * Whole pinned skills: inside a turn, the ones it read back (or, from a legacy session's carry, those its older
   * carry held whole). Empty in the carries a turn hands its session, which must stay small (they cross
   * continue-as-new).
   */
  snapshots: SkillSnapshot[];
}
