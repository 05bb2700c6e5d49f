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
  /** 3: the pinned skills by reference (`skills`); 2 carried them whole (`snapshots`), and is migrated when read. */
  version: 2 | 3;
  plan: ActivePlan | null;
  route: Route | null;
  /**
   * The pinned skills the plan needs, by name and hash, so the next turn serves the same content: it reads them back
   * (the resolveSkillSnapshots activity) into `snapshots` when it starts. Absent from carries of version 2.
   */
  skills?: SkillRef[];
  /**
   * Whole pinned skills: those of a carry of version 2 (used as they are), and inside a turn, the ones it read back.
   * Empty in the carries a turn hands its session, which must stay small (they cross continue-as-new).
   */
  snapshots: SkillSnapshot[];
  /**
   * The same plan and route in the shape of the code before the policy core, for its workers during a rolling
   * deploy. Goes with the patches of state.ts (docs/operators.md).
   */
  orchestrator?: { plan: ActivePlan | null; route: Route | null; violations: number };
}
