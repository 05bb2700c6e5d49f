import type { CheckpointAnswer, PendingCheckpoint } from '../lib/client';

/** `question_count=3 types=["choice"] difficulty=easy`: values are JSON when they parse as JSON, else text. */
export function parseOverrides(pairs: string[]): Record<string, unknown> | string {
  const overrides: Record<string, unknown> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) return `"${pair}" is not key=value (for example question_count=5).`;
    const raw = pair.slice(at + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // Plain text.
    }
    overrides[pair.slice(0, at).trim()] = value;
  }
  return overrides;
}

/**
 * What a line typed at a checkpoint prompt means, among the actions the checkpoint accepts (`actions`): for approvals
 * `y`/empty approves, `c` cancels, `m` asks for overrides (`modify`), a number chooses an option; for questions a
 * number chooses, `/cancel` cancels, anything else is the answer. Null: ask again (also for an action the checkpoint
 * does not take, such as approving a routing checkpoint); `'modify'`: ask for the key=value pairs next.
 */
export function answerFromLine(checkpoint: PendingCheckpoint, line: string): CheckpointAnswer | 'modify' | null {
  const read = readLine(checkpoint, line.trim());
  const action = read === 'modify' ? 'modify' : read?.action;
  return action && checkpoint.actions.includes(action) ? read : null;
}

function readLine(checkpoint: PendingCheckpoint, text: string): CheckpointAnswer | 'modify' | null {
  const options = checkpoint.options ?? [];
  if (/^\d+$/.test(text) && options.length > 0) {
    const option = options[Number(text) - 1];
    return option === undefined ? null : { action: 'choose', choice: option };
  }
  if (checkpoint.kind === 'question') {
    if (text === '/cancel') return { action: 'cancel' };
    return text === '' ? null : { action: 'answer', answer: text };
  }
  const word = text.toLowerCase();
  if (word === '' || word === 'y' || word === 'yes' || word === 'a' || word === 'approve') return { action: 'approve' };
  if (word === 'c' || word === 'cancel' || word === 'n' || word === 'no') return { action: 'cancel' };
  if (word === 'm' || word === 'modify') return 'modify';
  return null;
}

/** The prompt offers exactly the checkpoint's actions. */
export function promptFor(checkpoint: PendingCheckpoint): string {
  const can = (action: CheckpointAnswer['action']) =>
    checkpoint.actions.includes(action) && (action !== 'choose' || (checkpoint.options ?? []).length > 0);
  if (checkpoint.kind === 'question') {
    const parts = [can('answer') && 'text', can('choose') && 'a number to choose', can('cancel') && '/cancel'].filter(
      Boolean,
    );
    return `answer (${parts.join(', ')})> `;
  }
  if (!can('approve')) {
    const parts = [can('choose') && 'a number', can('cancel') && '[c]ancel'].filter(Boolean);
    return `choose (${parts.join(', ')})> `;
  }
  const parts = [
    '[y]es',
    can('modify') && '[m]odify',
    can('cancel') && '[c]ancel',
    can('choose') && 'a number to choose',
  ].filter(Boolean);
  return `approve? (${parts.join(', ')})> `;
}
