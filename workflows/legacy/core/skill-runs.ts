import type { PendingCheckpoint } from './checkpoints';
import type { TurnEventBody } from './events';
import type { Usage } from './model';
import type { ToolCatalog, ToolCatalogReference } from './tools/types';
import type { HistoryMessage, SkillExecution } from './schemas/skill-runs';
import type { TurnSettings } from './settings';
import type { Reason } from './run/reasons';
import type { TurnError, TurnStatus } from './turn';

/**
 * Skill runs: a skill invoked with invoke_skill runs as a child workflow (`skillWorkflow`) of the turn, or of the skill
 * run that invoked it. These are the shapes that cross between them.
 */
export type { HistoryMessage, SkillExecution };

export interface SkillRunInput {
  /** Its own workflow id (skillRunWorkflowId): the ids of the runs it invokes derive from it. */
  workflowId: string;
  /** The turn at the top of the tree: clients follow its stream, answer its checkpoints, read its records. */
  rootTurnId: string;
  /** The turn or skill run that invoked this one, and the invoke_skill call. */
  parentWorkflowId: string;
  callId: string;
  sessionId: string;
  userId: string;
  createdAt: string;
  settings: TurnSettings;
  requestId?: string;
  skill: string;
  task: string;
  history: HistoryMessage[];
  /** Validated, declared defaults filled in. */
  params: Record<string, unknown>;
  /** 1 for a skill the turn invoked, +1 per nesting. */
  depth: number;
  /** The checkpoints the turn has numbered so far: this run's continue from there (ids stay unique in the turn). */
  checkpointBase: number;
  /**
   * The registered tools of its turn, as the turn read them when it started: a skill run keeps the same list. By
   * reference (the headers) from a run of separatePatches.toolCatalogByReference: the skill run reads the detail of the
   * tools its skill grants.
   */
  tools: ToolCatalog | ToolCatalogReference;
  /** What it may spend, from the run that invoked it (absent: invoked by code before spending bounds). */
  allowance?: SkillRunAllowance;
}

/** What a skill run and the runs under it may spend of their turn's (core/policy spending bounds). */
export interface SkillRunAllowance {
  /** invoke_skill calls. */
  invocations: number;
  /** Model tokens (absent: no budget), and the UTC day (YYYY-MM-DD) of the user's ledger they are reserved in. */
  tokens?: { left: number; day: string };
}

export interface SkillRunResult {
  skill: string;
  status: Exclude<TurnStatus, 'running' | 'waiting'>;
  reason?: Reason;
  success: boolean;
  /** The validated output of a skill that declares one, else the final answer's text; null when it failed. */
  output: unknown;
  error?: TurnError;
  /** Model usage of this run and every run under it. */
  usage: Usage;
  /** The highest checkpoint number used by this run and the runs under it. */
  checkpointCount: number;
  /** The execution records of the runs under this one. */
  skills: SkillExecution[];
}

/** What a skill run tells the run that invoked it while it goes on (the `skillProgress` signal). */
export interface SkillProgress {
  workflowId: string;
  /** 1, 2, ... per run: a repeated or late one is ignored. */
  seq: number;
  /** Its new events (status and terminal events stay in its own log), with their depth. */
  events: TurnEventBody[];
  status: TurnStatus;
  /** The checkpoint it (or a run under it) waits at, or null. */
  pendingCheckpoint: PendingCheckpoint | null;
  usage: Usage;
  checkpointCount: number;
  skills: SkillExecution[];
}

/** A skill run's workflow id: its parent's id, the skill and the invoke_skill call id (deterministic and findable). */
export function skillRunWorkflowId(parentWorkflowId: string, skill: string, callId: string): string {
  return `${parentWorkflowId}/${skill}/${callId}`;
}
