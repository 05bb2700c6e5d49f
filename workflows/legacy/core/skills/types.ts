import type { Effort } from '../thinking';
/**
 * The skill library as plain JSON: what the registry reads at start-up (manifests), what a turn pins when it loads
 * a skill (snapshots), and what validation reports (problems). Everything here crosses workflow and activity
 * boundaries unchanged.
 */
import type { PlanNode } from './plan-ast';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export const fieldTypes = ['string', 'number', 'integer', 'boolean', 'array', 'object'] as const;
export type FieldType = (typeof fieldTypes)[number];
export type ItemType = Exclude<FieldType, 'array'>;

/** A typed parameter of a skill or checkpoint, or a field of a skill's output. */
export interface FieldSpec {
  name: string;
  type: FieldType;
  description: string;
  required: boolean;
  default?: JsonValue;
  /** Allowed values (string, number and integer fields, and the items of arrays). */
  enum?: (string | number)[];
  /** Type of each item of an array field. */
  items?: ItemType;
  minimum?: number;
  maximum?: number;
}

export const onTimeoutPolicies = ['cancel', 'approve-defaults', 'skip'] as const;
export type OnTimeout = (typeof onTimeoutPolicies)[number];

export const checkpointKinds = ['approval', 'question'] as const;
export type CheckpointKind = (typeof checkpointKinds)[number];

/** One option of a routing checkpoint: the human's choice gates which skill may be loaded next. */
export interface RouteOption {
  /** What the human picks: a skill name, or `stop`. */
  id: string;
  label: string;
  /** The skill the choice allows next; null for `stop`, which allows only the final answer. */
  skill: string | null;
}

export interface CheckpointSpec {
  name: string;
  kind: CheckpointKind;
  /** How long the checkpoint waits for a human; null waits as long as the turn lives. */
  ttlMs: number | null;
  onTimeout: OnTimeout;
  params: FieldSpec[];
  routes: RouteOption[];
  /** Whether the plan names it; checkpoints the plan does not name may be requested at any time. */
  inPlan: boolean;
}

/** Policy for checkpoints the skill does not declare (an exam's individual questions). */
export interface FreeCheckpointPolicy {
  ttlMs: number | null;
  onTimeout: Exclude<OnTimeout, 'approve-defaults'>;
}

export const deadlineUnits = ['seconds', 'minutes', 'hours'] as const;
export type DeadlineUnit = (typeof deadlineUnits)[number];

export type DeadlineSource =
  /** The clock starts when the skill is loaded. */
  | { kind: 'fixed'; ms: number }
  /** The clock starts when the checkpoint is resolved; its (possibly overridden) numeric param sets the length. */
  | { kind: 'param'; checkpoint: string; param: string; unit: DeadlineUnit };

export interface DeadlineSpec {
  source: DeadlineSource;
  /** The plan step to jump to when the deadline passes. */
  jumpTo: string;
}

export interface StepLimit {
  step: string;
  /** How many times the step may be entered in one turn. */
  maxRuns: number;
}

export interface SkillLimits {
  /** Model rounds while the skill is active; null leaves the engine default. */
  maxIterations: number | null;
  timeoutMs: number | null;
}

export interface PlanSpec {
  /** The plan as written in `metadata.plan`. */
  source: string;
  root: PlanNode;
  /** Distinct step (subskill) names the plan mentions, in order of first appearance. */
  steps: string[];
  /** Distinct checkpoint names the plan mentions, in order of first appearance. */
  checkpoints: string[];
}

/** Everything the registry knows about a skill without reading its body. */
export interface SkillManifest {
  name: string;
  description: string;
  license: string | null;
  compatibility: string | null;
  /** The spec's experimental `allowed-tools`, kept as written for other runtimes. */
  allowedTools: string | null;
  /** Frontmatter `metadata` as written (string keys, string values). */
  metadata: Record<string, string>;
  category: string | null;
  tags: string[];
  version: string | null;
  enabled: boolean;
  /** `metadata.effort`: the model's effort while the skill is active; absent: the configured one. */
  effort?: Effort;
  plan: PlanSpec | null;
  parameters: FieldSpec[];
  output: FieldSpec[];
  checkpoints: CheckpointSpec[];
  /** null: the skill says nothing about them, so the configured default applies. */
  freeCheckpoints: FreeCheckpointPolicy | null;
  deadlines: DeadlineSpec[];
  stepLimits: StepLimit[];
  limits: SkillLimits;
  /** Skills this skill may load while it is active. */
  children: string[];
  /** Host tools the skill may use besides the engine's own; null means no restriction. */
  tools: string[] | null;
  /** Subskill names (files `subskills/NAME.md`). */
  subskills: string[];
  /** Resource paths relative to the skill folder, sorted. */
  resources: string[];
}

export interface SubskillContent {
  name: string;
  body: string;
}

/** The pinned content of one version of a skill: all a turn needs to serve its skill tools without more I/O. */
export interface SkillSnapshot {
  name: string;
  /** sha256 (hex) of the skill's files; names the version in the skill store. */
  hash: string;
  manifest: SkillManifest;
  /** Sanitized SKILL.md body. */
  body: string;
  /** Sanitized subskill bodies, in the order of `manifest.subskills`. */
  subskills: SubskillContent[];
}

/** A pinned skill version by reference: what a carried plan holds instead of the whole snapshot. */
export interface SkillRef {
  name: string;
  hash: string;
}

export interface SkillResource {
  name: string;
  hash: string;
  path: string;
  content: string;
}

export interface ReadSkillResourceInput {
  name: string;
  hash: string;
  path: string;
}

export type ProblemSeverity = 'error' | 'warning';

/** One thing wrong with a skill folder: where, what, and how to fix it. */
export interface SkillProblem {
  severity: ProblemSeverity;
  /** The skill folder's name. */
  skill: string;
  /** Path relative to the skills directory, e.g. `exam-mode-tuner/SKILL.md`. */
  file: string;
  /** The field at fault, e.g. `metadata.plan` or `checkpoints.exam_params.ttl`; `-` for the file as a whole. */
  field: string;
  message: string;
  fix: string;
}

export interface SkillCatalog {
  /** Valid, enabled skills, sorted by name. */
  skills: SkillManifest[];
  /** Valid skills switched off with `metadata.enabled: "false"`. */
  disabled: string[];
  problems: SkillProblem[];
}
