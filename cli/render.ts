import type { PendingCheckpoint, StreamEvent } from '../lib/client';
import { isCancelledCallResult } from '../core/events';
import { humanApprovalToolName } from '../core/skills/tool-names';

/** Turns a turn's events into compact terminal lines: the assistant's text as it streams, tools, steps, endings. */
export class EventPrinter {
  /** The model call whose text is being streamed on the current line. */
  private streaming: string | undefined;

  constructor(private readonly write: (text: string) => void) {}

  print(event: StreamEvent): void {
    // Inside a skill run (invoke_skill), lines are indented by its depth and its text is the skill run's, not the assistant's.
    const depth =
      'depth' in event && typeof event.depth === 'number' && !('isSkill' in event && event.isSkill) ? event.depth : 0;
    const pad = '  '.repeat(depth);
    const speaker = depth > 0 ? `${pad}skill run> ` : 'assistant> ';
    switch (event.type) {
      case 'message.delta':
        if (this.streaming !== undefined && this.streaming !== `${depth}:${event.call ?? ''}`) this.endLine();
        if (this.streaming === undefined) this.write(speaker);
        this.streaming = `${depth}:${event.call ?? ''}`;
        this.write(event.text);
        return;
      case 'message.reset':
        this.endLine();
        this.write('  (the model call failed mid-answer; retrying)\n');
        return;
      case 'message':
        if (this.streaming !== undefined) this.endLine();
        else this.write(`${speaker}${event.text}\n`);
        return;
      case 'tool.start':
        if (event.name === humanApprovalToolName) return;
        this.endLine();
        if (event.isSkill && event.name !== 'load_skill')
          this.write(
            `${'  '.repeat((event.depth ?? 1) - 1)}  - skill ${event.name} (depth ${event.depth})${compact(event.input)}\n`,
          );
        else this.write(`${pad}  - ${event.name}${compact(event.args)}\n`);
        return;
      case 'tool.end':
        if (!event.isError) return;
        // A checkpoint's call prints nothing of its own (its checkpoint does); a cut one ends with the turn's `cancelled`.
        if (isCancelledCallResult(event.result)) {
          if (event.name !== humanApprovalToolName) this.write(`${pad}  ! ${event.name} cancelled\n`);
        } else
          this.write(
            `${pad}  ! ${event.name} failed: ${truncate(typeof event.result === 'string' ? event.result : JSON.stringify(event.result), 120)}\n`,
          );
        return;
      case 'step':
        this.endLine();
        this.write(
          `${pad}  > ${event.skill}: ${event.step ?? 'loaded'}${event.remaining.length > 0 ? ` (then ${event.remaining.join(', ')})` : ' (plan complete)'}\n`,
        );
        return;
      case 'checkpoint.resolved':
        this.write(`${pad}  ok ${event.checkpointId}: ${event.action} by ${event.by}\n`);
        return;
      case 'checkpoint.expired':
        this.write(`${pad}  ${event.checkpointId} expired before anyone answered\n`);
        return;
      case 'error':
        this.endLine();
        this.write(`error: ${event.code}: ${event.message}\n`);
        return;
      case 'cancelled':
        this.endLine();
        this.write(`(turn cancelled: ${event.reason})\n`);
        return;
      case 'done':
        this.endLine();
        return;
      default:
        return;
    }
  }

  endLine(): void {
    if (this.streaming === undefined) return;
    this.streaming = undefined;
    this.write('\n');
  }
}

/** How a pending checkpoint is shown before its prompt. */
export function describeCheckpoint(checkpoint: PendingCheckpoint, now = Date.now()): string {
  const deadline = checkpoint.expiresAt ? `, answer within ${formatAge(Date.parse(checkpoint.expiresAt) - now)}` : '';
  const asker = checkpoint.depth ? `, asked by skill ${checkpoint.skill} at depth ${checkpoint.depth}` : '';
  const lines = [
    `? ${checkpoint.summary}`,
    `  (${checkpoint.kind} ${checkpoint.name}, ${checkpoint.id}${deadline}${asker})`,
  ];
  for (const [key, value] of Object.entries(checkpoint.params ?? {}))
    lines.push(`    ${key} = ${JSON.stringify(value)}`);
  (checkpoint.options ?? []).forEach((option, index) => lines.push(`    ${index + 1}) ${option}`));
  return `${lines.join('\n')}\n`;
}

export function compact(value: unknown): string {
  if (value === undefined || value === null) return '';
  const text = JSON.stringify(value);
  return text === '{}' ? '' : ` ${truncate(text, 80)}`;
}

export function truncate(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}

/** `90s`, `12m`, `3h`, `2d`. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86_400)}d`;
}
