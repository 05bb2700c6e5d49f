import type { CheckpointAnswer, PendingCheckpoint } from '../lib/client';
import { parseOverrides } from './answers';
import { connect, explain } from './connect';
import type { CliIo } from './io';
import { formatAge } from './render';

export interface InboxOptions {
  user?: string;
  skill?: string;
  limit?: number;
  json: boolean;
}

/** `skillflow inbox`: the turns waiting for a human (an operator's key sees everyone's), oldest wait first. */
export async function inbox(options: InboxOptions, io: CliIo): Promise<number> {
  const connection = connect(io.env, io.cwd);
  try {
    const page = await connection.client.listTurns({
      status: 'waiting',
      user: options.user,
      skill: options.skill,
      limit: options.limit ?? 100,
    });
    const rows = [];
    for (const summary of page.turns) {
      const turn = await connection.client.getTurn(summary.id).catch(() => null);
      const checkpoint = turn?.pendingCheckpoint;
      if (!turn || turn.status !== 'waiting' || !checkpoint) continue;
      rows.push({
        turnId: turn.id,
        sessionId: turn.sessionId,
        userId: summary.userId,
        skill: turn.skill,
        step: turn.step,
        checkpoint,
      });
    }
    rows.sort((a, b) => a.checkpoint.requestedAt.localeCompare(b.checkpoint.requestedAt));
    if (options.json) {
      io.stdout(`${JSON.stringify({ turns: rows, nextCursor: page.nextCursor })}\n`);
      return 0;
    }
    if (rows.length === 0) {
      io.stdout('No turn is waiting for a human.\n');
      return 0;
    }
    const now = Date.now();
    const table = [
      ['TURN', 'USER', 'SKILL', 'CHECKPOINT', 'WAITING', 'DEADLINE', 'SUMMARY'],
      ...rows.map(({ turnId, userId, skill, checkpoint }) => [
        turnId,
        userId,
        skill ?? '-',
        `${checkpoint.id} ${checkpoint.name}`,
        formatAge(now - Date.parse(checkpoint.requestedAt)),
        deadline(checkpoint, now),
        checkpoint.summary.replace(/\s+/g, ' ').slice(0, 60),
      ]),
    ];
    io.stdout(formatTable(table));
    if (page.nextCursor) io.stdout('(more waiting turns: use --limit, or the API with the cursor)\n');
    io.stdout(
      'Answer with: skillflow answer TURN CHECKPOINT --approve | --modify key=value... | --cancel | --choose X | --answer TEXT\n',
    );
    return 0;
  } catch (err) {
    io.stderr(`skillflow: ${explain(err, connection)}\n`);
    return 1;
  }
}

function deadline(checkpoint: PendingCheckpoint, now: number): string {
  if (!checkpoint.expiresAt) return 'none';
  const left = Date.parse(checkpoint.expiresAt) - now;
  return left <= 0 ? 'due' : `in ${formatAge(left)}`;
}

export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return (
    rows
      .map((row) =>
        row
          .map((cell, i) => (i < row.length - 1 ? cell.padEnd(widths[i]) : cell))
          .join('  ')
          .trimEnd(),
      )
      .join('\n') + '\n'
  );
}

export interface AnswerOptions {
  approve: boolean;
  cancel: boolean;
  modify?: string[];
  choose?: string;
  answer?: string;
  json: boolean;
}

/** `skillflow answer TURN CHECKPOINT --approve | ...`: CHECKPOINT is the pending checkpoint's id (cp-3) or name. */
export async function answer(turnId: string, checkpoint: string, options: AnswerOptions, io: CliIo): Promise<number> {
  const given = [
    options.approve,
    options.cancel,
    options.modify !== undefined,
    options.choose !== undefined,
    options.answer !== undefined,
  ].filter(Boolean);
  if (given.length !== 1) {
    io.stderr(
      'skillflow answer: give exactly one of --approve, --modify key=value..., --cancel, --choose X, --answer TEXT.\n',
    );
    return 2;
  }
  let decision: CheckpointAnswer;
  if (options.approve) decision = { action: 'approve' };
  else if (options.cancel) decision = { action: 'cancel' };
  else if (options.choose !== undefined) decision = { action: 'choose', choice: options.choose };
  else if (options.answer !== undefined) decision = { action: 'answer', answer: options.answer };
  else {
    const overrides = parseOverrides(options.modify!);
    if (typeof overrides === 'string') {
      io.stderr(`skillflow answer: ${overrides}\n`);
      return 2;
    }
    decision = { action: 'modify', overrides };
  }
  const connection = connect(io.env, io.cwd);
  try {
    let checkpointId = checkpoint;
    if (!/^cp-\d+$/.test(checkpoint)) {
      const pending = (await connection.client.getTurn(turnId)).pendingCheckpoint;
      if (!pending || pending.name !== checkpoint) {
        io.stderr(
          `skillflow: turn ${turnId} does not wait at a checkpoint named ${checkpoint}${pending ? ` (it waits at ${pending.id} ${pending.name})` : ''}.\n`,
        );
        return 1;
      }
      checkpointId = pending.id;
    }
    const accepted = await connection.client.answerCheckpoint(turnId, checkpointId, decision);
    io.stdout(
      options.json
        ? `${JSON.stringify(accepted)}\n`
        : `Answered ${accepted.checkpointId} of ${turnId}: ${accepted.action} (by ${accepted.by}).\n`,
    );
    return 0;
  } catch (err) {
    io.stderr(`skillflow: ${explain(err, connection)}\n`);
    return 1;
  }
}
