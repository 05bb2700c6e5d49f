/**
 * What a waiting run tells an operator in the Temporal UI ("Current Details", the `__temporal_workflow_metadata`
 * query): the checkpoint it waits at, and answers ready to paste into the UI's signal and update dialogs. Markdown,
 * as the UI renders it.
 */
import type { CheckpointAction, CheckpointDecision, PendingCheckpoint } from './checkpoints';

/** Where an answer goes and under which names: the workflow to signal or update, and who asked. */
export interface DetailsTarget {
  /** The workflow an answer is sent to: the turn (a skill run's checkpoint is answered through its turn too). */
  answerTo: string;
  /** The signal and update names (workflows/definitions.ts). */
  signal: string;
  update: string;
  /** The skill run that asked, when the waiting run shows a checkpoint from a run below it. */
  askedBy?: string;
  /** Set in a skill run's own details: the checkpoint is answered through its turn, not here. */
  viaTurn?: boolean;
}

/** Who the pasted answers say decided; the operator replaces it with their name. */
export const operatorPlaceholder = 'operator';

/** One answer per action the checkpoint accepts, valid as written: proposed params for modify, the first option. */
export function readyAnswers(
  pending: PendingCheckpoint,
): Array<{ action: CheckpointAction; decision: CheckpointDecision }> {
  return pending.actions.flatMap((action) => {
    const decision = answerFor(pending, action);
    return decision
      ? [{ action, decision: { checkpointId: pending.id, action, ...decision, by: operatorPlaceholder } }]
      : [];
  });
}

function answerFor(pending: PendingCheckpoint, action: CheckpointAction): Partial<CheckpointDecision> | undefined {
  switch (action) {
    case 'approve':
    case 'cancel':
      return {};
    case 'modify':
      return pending.params && Object.keys(pending.params).length > 0
        ? { overrides: pending.params }
        : { note: 'What to change, in your own words' };
    case 'choose':
      return pending.options && pending.options.length > 0 ? { choice: pending.options[0] } : undefined;
    case 'answer':
      return { answer: 'Your answer' };
  }
}

/** The current details of a run waiting at `pending`, or '' when it waits at none (the UI then shows nothing). */
export function checkpointDetails(pending: PendingCheckpoint | null, target: DetailsTarget): string {
  if (!pending) return '';
  return [
    `**Waiting for a human** at checkpoint **${pending.name}** (\`${pending.id}\`, ${pending.kind})${askedBy(pending, target)}.`,
    '',
    ...pending.summary.split('\n').map((line) => `> ${line}`),
    '',
    `- Deadline: ${pending.expiresAt ?? 'none (it waits until answered)'}`,
    `- Parameters: ${pending.params ? inlineCode(JSON.stringify(pending.params)) : 'none'}`,
    ...(pending.options && pending.options.length > 0
      ? [`- Options: ${pending.options.map(inlineCode).join(', ')}`]
      : []),
    `- Actions: ${pending.actions.join(', ')}`,
    '',
    `${target.viaTurn ? `Answer it through its turn \`${target.answerTo}\`` : 'Answer it'} with the update \`${target.update}\` (validated: a rejection says why) ` +
      `or the signal \`${target.signal}\` (an invalid one is logged and ignored). Input, ready to paste (put your name in \`by\`):`,
    '',
    ...readyAnswers(pending).map(({ action, decision }) => `- ${action}: ${inlineCode(JSON.stringify(decision))}`),
  ].join('\n');
}

/** Markdown inline code that survives backticks in the text. */
function inlineCode(text: string): string {
  const fence = '`'.repeat(Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length)) + 1);
  return fence.length > 1 ? `${fence} ${text} ${fence}` : `\`${text}\``;
}

function askedBy(pending: PendingCheckpoint, target: DetailsTarget): string {
  const skill = pending.skill ? ` by skill \`${pending.skill}\`` : '';
  if (target.askedBy) return `, asked${skill} in skill run \`${target.askedBy}\` (depth ${pending.depth ?? 1})`;
  return skill ? `, asked${skill}` : '';
}
