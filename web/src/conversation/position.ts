import type { LoggedEvent } from '../../../lib/client';

/**
 * Where the turn is in its skill's plan, from its events alone:
 * - the step: the last `step` event's skill, step and how many steps remain;
 * - a count: a checkpoint named `<name>_<n>` (question_3) is number n of the `<name>_count` (question_count) an earlier
 *   checkpoint had approved, overrides included ("question 3 of 10");
 * - a time limit: an approved `time_limit_min` runs from that approval ("12 min left").
 */
export interface PlanPosition {
  skill: string | null;
  step: string | null;
  remaining: string[];
  count: { name: string; number: number; total: number | null } | null;
  /** When the approved time limit runs out (ms since the epoch), or null. */
  endsAt: number | null;
}

const numbered = /^(.+)_(\d+)$/;

export function planPosition(events: LoggedEvent[]): PlanPosition {
  const position: PlanPosition = { skill: null, step: null, remaining: [], count: null, endsAt: null };
  const approved: Record<string, unknown> = {};
  const proposed = new Map<string, Record<string, unknown>>();
  const requestedBy = new Map<string, string>();
  let lastCheckpointCall: string | undefined;
  for (const event of events) {
    if (event.type === 'step') {
      position.skill = event.skill;
      position.step = event.step;
      position.remaining = event.remaining;
    } else if (event.type === 'tool.start' && event.name === 'request_human_approval') {
      lastCheckpointCall = event.callId;
    } else if (event.type === 'checkpoint.requested') {
      const { checkpoint } = event;
      if (checkpoint.params) proposed.set(checkpoint.id, checkpoint.params);
      if (lastCheckpointCall) requestedBy.set(lastCheckpointCall, checkpoint.id);
      const match = numbered.exec(checkpoint.name);
      if (match) position.count = { name: match[1], number: Number(match[2]), total: null };
    } else if (event.type === 'tool.end' && requestedBy.has(event.callId)) {
      const result = event.result as { approved?: boolean; overrides?: Record<string, unknown> } | null;
      if (result?.approved !== true) continue;
      const values = { ...proposed.get(requestedBy.get(event.callId)!), ...(result.overrides ?? {}) };
      Object.assign(approved, values);
      if (typeof values.time_limit_min === 'number')
        position.endsAt = Date.parse(event.at) + values.time_limit_min * 60_000;
    }
  }
  if (position.count) {
    const total = approved[`${position.count.name}_count`];
    position.count.total = typeof total === 'number' ? total : null;
  }
  return position;
}

/** "question 3 of 10", "question 3", or null. */
export function countLabel(position: PlanPosition): string | null {
  const { count } = position;
  if (!count) return null;
  const name = count.name.replace(/_/g, ' ');
  return count.total === null ? `${name} ${count.number}` : `${name} ${count.number} of ${count.total}`;
}

/** "1:05:09", "4:05", "0:09" for a duration in ms (never negative). */
export function clock(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const hours = Math.floor(total / 3600);
  const minutes = Math.floor((total % 3600) / 60);
  const seconds = String(total % 60).padStart(2, '0');
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${seconds}` : `${minutes}:${seconds}`;
}
