/** Human-in-the-loop checkpoints: the request the model makes, the decisions a human gives, and their results. */
import { isPlainObject, schemaOfValues, validateJson } from './json-validator';
import { maxNoteLength, type CheckpointAction } from './checkpoint-actions';
import type { CheckpointAnswer, CheckpointKind, PendingCheckpoint } from './schemas/checkpoints';

export { checkpointActions, maxNoteLength, type CheckpointAction } from './checkpoint-actions';
export type { CheckpointAnswer, CheckpointKind, PendingCheckpoint };

export interface CheckpointRequest {
  checkpoint: string;
  summary: string;
  kind: CheckpointKind;
  params?: Record<string, unknown>;
  options?: string[];
}

/** An answer as the turn receives it: which checkpoint, and who decided (the API fills in the caller; operators
 * sending the signal by hand should name themselves). */
export type CheckpointDecision = CheckpointAnswer & { checkpointId: string; by?: string };

/** The id of a turn's `number`th checkpoint (skill runs below go on with their turn's count): `cp-1`, `cp-2`, ... */
export const checkpointIdOf = (number: number): string => `cp-${number}`;

/** The number in a checkpoint id (`cp-3`: 3), or null when `id` is not one. */
export function checkpointNumberOf(id: unknown): number | null {
  return typeof id === 'string' && /^cp-[1-9]\d*$/.test(id) ? Number(id.slice('cp-'.length)) : null;
}

export type CheckpointResult =
  | { approved: true; overrides?: Record<string, unknown>; note?: string }
  | { choice: string }
  | { answer: string }
  | { cancelled: true };

export const CheckpointErrorType = {
  notFound: 'CheckpointNotFound',
  notPending: 'CheckpointNotPending',
  invalidDecision: 'InvalidCheckpointDecision',
} as const;

/** A routing checkpoint's declared routes are the whole decision: one of them, or no route at all. */
export const routingActions: CheckpointAction[] = ['choose', 'cancel'];

export function allowedActions(checkpoint: Pick<PendingCheckpoint, 'kind' | 'options'>): CheckpointAction[] {
  const actions: CheckpointAction[] =
    checkpoint.kind === 'approval' ? ['approve', 'modify', 'cancel'] : ['answer', 'cancel'];
  if (checkpoint.options && checkpoint.options.length > 0) actions.push('choose');
  return actions;
}

/**
 * A pending checkpoint as read from a turn of any code: turns of the code before paramsSchema and actions existed
 * (still running on an older worker during a deploy) get the ones that code applied: the proposed keys and JSON types.
 */
export function pendingCheckpointOf(pending: PendingCheckpoint): PendingCheckpoint {
  if (pending.actions && pending.paramsSchema !== undefined) return pending;
  return {
    ...pending,
    paramsSchema: pending.params ? schemaOfValues(pending.params) : null,
    actions: allowedActions(pending),
  };
}

type DecisionCheck = Pick<PendingCheckpoint, 'kind' | 'params' | 'paramsSchema' | 'options' | 'actions'>;

const problem = (path: string, rule: string, message: string, allowed?: unknown): DecisionProblem => ({
  path,
  rule,
  message,
  ...(allowed !== undefined ? { allowed } : {}),
});

/** One reason a decision cannot be accepted: like a schema problem, with the decision's own rules too. */
export interface DecisionProblem {
  path: string;
  rule: string;
  allowed?: unknown;
  message: string;
}

/** Why a decision cannot be accepted for this checkpoint; empty when it can. */
export function decisionProblems(checkpoint: DecisionCheck, decision: CheckpointDecision): DecisionProblem[] {
  if (!isPlainObject(decision)) return [problem('', 'type', 'The decision must be an object.')];
  if (!checkpoint.actions.includes(decision.action)) {
    return [
      problem(
        'action',
        'enum',
        `${checkpoint.kind === 'approval' ? 'An approval' : 'A question'} checkpoint${checkpoint.options ? ' with options' : ''} accepts ${checkpoint.actions.join(', ')}; not ${JSON.stringify(decision.action)}.`,
        checkpoint.actions,
      ),
    ];
  }
  if (decision.note !== undefined && decision.action !== 'modify')
    return [problem('note', 'action', 'note goes with modify only.')];
  switch (decision.action) {
    case 'choose':
      if (typeof decision.choice !== 'string' || !checkpoint.options?.includes(decision.choice)) {
        return [
          problem(
            'choice',
            'enum',
            `choice must be one of the options exactly as offered: ${JSON.stringify(checkpoint.options)}.`,
            checkpoint.options,
          ),
        ];
      }
      return [];
    case 'answer':
      return typeof decision.answer === 'string' && decision.answer.trim() !== ''
        ? []
        : [problem('answer', 'required', 'answer must be a non-empty string.')];
    case 'modify':
      return modifyProblems(checkpoint, decision);
    default:
      return [];
  }
}

function modifyProblems(checkpoint: DecisionCheck, decision: CheckpointDecision): DecisionProblem[] {
  const { overrides, note } = decision;
  if (note !== undefined && (typeof note !== 'string' || note.trim() === '' || note.length > maxNoteLength)) {
    return [problem('note', 'type', `note must be non-empty text of at most ${maxNoteLength} characters.`)];
  }
  if (overrides !== undefined && !isPlainObject(overrides))
    return [problem('overrides', 'type', 'overrides must be an object of param names and values.')];
  const count = overrides ? Object.keys(overrides).length : 0;
  if (count === 0 && note === undefined) {
    return [
      problem(
        'overrides',
        'required',
        "modify needs overrides (an object with at least one of the checkpoint's params), a note in words, or both.",
      ),
    ];
  }
  if (count === 0) return [];
  const schema = checkpoint.paramsSchema ?? schemaOfValues({});
  const merged = { ...(checkpoint.params ?? {}), ...overrides };
  const checked = validateJson(merged, schema);
  if (checked.ok) return [];
  return checked.problems.map((found) => {
    const key = found.path.split(/[.[]/)[0];
    const path = key in overrides! ? `overrides.${found.path}` : `params.${found.path}`;
    return { ...found, path, message: `${path}${found.message.slice(found.path.length)}` };
  });
}

export function decisionResult(decision: CheckpointDecision): CheckpointResult {
  switch (decision.action) {
    case 'approve':
      return { approved: true };
    case 'modify':
      return {
        approved: true,
        ...(decision.overrides && Object.keys(decision.overrides).length > 0 ? { overrides: decision.overrides } : {}),
        ...(decision.note ? { note: decision.note } : {}),
      };
    case 'choose':
      return { choice: decision.choice! };
    case 'answer':
      return { answer: decision.answer! };
    case 'cancel':
      return { cancelled: true };
  }
}

/** Validates the model's request_human_approval input; returns the request or a message for an error result. */
export function parseCheckpointRequest(input: unknown): CheckpointRequest | string {
  if (!input || typeof input !== 'object') return 'request_human_approval needs an object input.';
  const value = input as Record<string, unknown>;
  if (typeof value.checkpoint !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(value.checkpoint)) {
    return 'checkpoint must be a name of lowercase letters, digits, _ and - (at most 64 characters).';
  }
  if (typeof value.summary !== 'string' || value.summary.trim() === '')
    return 'summary must be a non-empty string telling the human what to decide.';
  const kind = value.kind ?? 'approval';
  if (kind !== 'approval' && kind !== 'question') return 'kind must be "approval" or "question".';
  if (value.params !== undefined && !isPlainObject(value.params)) return 'params must be an object.';
  if (value.options !== undefined) {
    const options = value.options;
    if (
      !Array.isArray(options) ||
      options.length === 0 ||
      options.some((option) => typeof option !== 'string' || option.trim() === '')
    ) {
      return 'options must be a non-empty array of non-empty strings.';
    }
    if (new Set(options).size !== options.length) return 'options must be distinct.';
  }
  return {
    checkpoint: value.checkpoint,
    summary: value.summary,
    kind,
    ...(value.params ? { params: value.params as Record<string, unknown> } : {}),
    ...(value.options ? { options: value.options as string[] } : {}),
  };
}

export const checkpointToolDefinition = {
  name: 'request_human_approval',
  description:
    'Pause and ask the human. Use kind "approval" to have parameters or a plan approved before acting (the human may ' +
    'approve, modify params, choose an option, or cancel), and kind "question" to ask something the human answers in ' +
    "their own words (or by choosing an option). The decision comes back as this tool's result; never assume it.",
  input_schema: {
    type: 'object' as const,
    properties: {
      checkpoint: {
        type: 'string',
        description: 'The checkpoint name, e.g. exam_params, or a name of your own for a one-off question.',
      },
      summary: { type: 'string', description: 'What the human is asked to decide or answer, in full.' },
      kind: { type: 'string', enum: ['approval', 'question'] },
      params: { type: 'object', description: 'Proposed parameters the human may modify (approval).' },
      options: {
        type: 'array',
        items: { type: 'string' },
        description: 'Choices offered to the human, each exactly as it should be returned.',
      },
    },
    required: ['checkpoint', 'summary', 'kind'],
  },
};
