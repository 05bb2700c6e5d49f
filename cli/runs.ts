import type { LoggedEvent, Turn } from '../lib/client';
import { connect, explain } from './connect';
import type { CliIo } from './io';
import { compact, truncate } from './render';

/** `skillflow runs show TURN`: the turn, then its events and steps as a timeline (seconds since the turn started). */
export async function showRun(turnId: string, options: { json: boolean }, io: CliIo): Promise<number> {
  const connection = connect(io.env, io.cwd);
  try {
    const [turn, events] = await Promise.all([connection.client.getTurn(turnId), connection.client.getTurnLog(turnId)]);
    if (options.json) {
      io.stdout(`${JSON.stringify({ turn, events })}\n`);
      return 0;
    }
    io.stdout(header(turn));
    const start = Date.parse(turn.createdAt);
    for (const event of events) {
      const line = describe(event);
      if (line) io.stdout(`${`+${((Date.parse(event.at) - start) / 1000).toFixed(1)}s`.padStart(9)}  ${line}\n`);
    }
    return 0;
  } catch (err) {
    io.stderr(`skillflow: ${explain(err, connection)}\n`);
    return 1;
  }
}

function header(turn: Turn): string {
  const usage = `${turn.usage.inputTokens} in / ${turn.usage.outputTokens} out tokens`;
  const lines = [
    `Turn ${turn.id} (session ${turn.sessionId})`,
    `  status   ${turn.status}${turn.reason ? ` (${turn.reason})` : ''}`,
    `  skill    ${turn.skill ?? '-'}${turn.step ? `, step ${turn.step}` : ''}`,
    `  started  ${turn.createdAt}; last change ${turn.updatedAt}; ${usage}`,
  ];
  if (turn.pendingCheckpoint)
    lines.push(
      `  waits at ${turn.pendingCheckpoint.id} ${turn.pendingCheckpoint.name}: ${truncate(turn.pendingCheckpoint.summary, 80)}`,
    );
  if (turn.error) lines.push(`  error    ${turn.error.code}: ${turn.error.message}`);
  return `${lines.join('\n')}\n\n`;
}

function describe(event: LoggedEvent): string | null {
  switch (event.type) {
    case 'status':
      return `status     ${event.status}${event.reason ? ` (${event.reason})` : ''}`;
    case 'message':
      return `assistant  ${truncate(event.text, 100)}`;
    case 'tool.start':
      // A checkpoint's own line says what it asked.
      return event.name === 'request_human_approval' ? null : `tool       ${event.name}${compact(event.args)}`;
    case 'tool.end':
      return event.isError ? `tool error ${event.name}: ${truncate(JSON.stringify(event.result), 90)}` : null;
    case 'checkpoint.requested':
      return `checkpoint ${event.checkpoint.id} ${event.checkpoint.name} (${event.checkpoint.kind}): ${truncate(event.checkpoint.summary, 70)}`;
    case 'checkpoint.resolved':
      return `answered   ${event.checkpointId}: ${event.action} by ${event.by}`;
    case 'checkpoint.expired':
      return `expired    ${event.checkpointId}`;
    case 'step':
      return `step       ${event.skill}: ${event.step ?? 'loaded'}${event.remaining.length > 0 ? ` (then ${event.remaining.join(', ')})` : ' (plan complete)'}`;
    case 'artifact':
      return `artifact   ${event.name} (${event.mimeType})`;
    case 'done':
      return `done       ${truncate(event.output, 100)}`;
    case 'error':
      return `error      ${event.code}: ${event.message}`;
    case 'cancelled':
      return `cancelled  ${event.reason}`;
    default:
      return null;
  }
}
