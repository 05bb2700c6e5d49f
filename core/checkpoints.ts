/** Human-in-the-loop checkpoints: the request the model makes, the decisions a human gives, and their results. */
import type { CheckpointAnswer, CheckpointKind, PendingCheckpoint } from './schemas/checkpoints';


export const checkpointActions = ['approve', 'modify', 'cancel', 'choose', 'answer'] as const;
export type CheckpointAction = (typeof checkpointActions)[number];
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

export type CheckpointResult =
  | { approved: true; overrides?: Record<string, unknown> }
  | { choice: string }
  | { answer: string }
  | { cancelled: true };

export const CheckpointErrorType = {
  notFound: 'CheckpointNotFound',
  notPending: 'CheckpointNotPending',
  invalidDecision: 'InvalidCheckpointDecision',
} as const;

export function allowedActions(checkpoint: Pick<PendingCheckpoint, 'kind' | 'options'>): CheckpointAction[] {
  const actions: CheckpointAction[] = checkpoint.kind === 'approval' ? ['approve', 'modify', 'cancel'] : ['answer', 'cancel'];
  if (checkpoint.options && checkpoint.options.length > 0) actions.push('choose');
  return actions;
}

const jsonType = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Why a decision cannot be accepted for this checkpoint, or null when it can. */
export function decisionProblem(checkpoint: PendingCheckpoint, decision: CheckpointDecision): string | null {
  if (!decision || typeof decision !== 'object') return 'The decision must be an object.';
  const allowed = allowedActions(checkpoint);
  if (!allowed.includes(decision.action)) {
    return `A ${checkpoint.kind} checkpoint${checkpoint.options ? ' with options' : ''} accepts ${allowed.join(', ')}; not ${JSON.stringify(decision.action)}.`;
  }
  switch (decision.action) {
    case 'choose':
      if (typeof decision.choice !== 'string' || !checkpoint.options?.includes(decision.choice)) {
        return `choice must be one of the options exactly as offered: ${JSON.stringify(checkpoint.options)}.`;
      }
      return null;
    case 'answer':
      return typeof decision.answer === 'string' && decision.answer.trim() !== '' ? null : 'answer must be a non-empty string.';
    case 'modify': {
      const overrides = decision.overrides;
      if (!overrides || typeof overrides !== 'object' || Array.isArray(overrides) || Object.keys(overrides).length === 0) {
        return 'modify needs overrides: an object with at least one of the checkpoint\'s params.';
      }
      const params = checkpoint.params ?? {};
      for (const [key, value] of Object.entries(overrides)) {
        if (!(key in params)) return `overrides.${key} is not a param of this checkpoint; its params are ${Object.keys(params).join(', ') || 'none'}.`;
        if (jsonType(value) !== jsonType(params[key])) {
          return `overrides.${key} must be of type ${jsonType(params[key])}, like the param; got ${jsonType(value)}.`;
        }
      }
      return null;
    }
    default:
      return null;
  }
}

export function decisionResult(decision: CheckpointDecision): CheckpointResult {
  switch (decision.action) {
    case 'approve':
      return { approved: true };
    case 'modify':
      return { approved: true, overrides: decision.overrides };
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
  if (typeof value.summary !== 'string' || value.summary.trim() === '') return 'summary must be a non-empty string telling the human what to decide.';
  const kind = value.kind ?? 'approval';
  if (kind !== 'approval' && kind !== 'question') return 'kind must be "approval" or "question".';
  if (value.params !== undefined && (value.params === null || typeof value.params !== 'object' || Array.isArray(value.params))) {
    return 'params must be an object.';
  }
  if (value.options !== undefined) {
    const options = value.options;
    if (!Array.isArray(options) || options.length === 0 || options.some((option) => typeof option !== 'string' || option.trim() === '')) {
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
    'their own words (or by choosing an option). The decision comes back as this tool\'s result; never assume it.',
  input_schema: {
    type: 'object' as const,
    properties: {
      checkpoint: { type: 'string', description: 'The checkpoint name, e.g. exam_params, or a name of your own for a one-off question.' },
      summary: { type: 'string', description: 'What the human is asked to decide or answer, in full.' },
      kind: { type: 'string', enum: ['approval', 'question'] },
      params: { type: 'object', description: 'Proposed parameters the human may modify (approval).' },
      options: { type: 'array', items: { type: 'string' }, description: 'Choices offered to the human, each exactly as it should be returned.' },
    },
    required: ['checkpoint', 'summary', 'kind'],
  },
};
