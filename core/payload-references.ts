import type { SkillRef } from './skills/types';
import type { TranscriptDelta } from './transcript';

/**
 * The references workflow history holds instead of content, as the codec finds them in a payload's JSON value, and
 * what it adds to the value once it has read them: a model call's system prompt and tool definitions by digest and
 * its conversation as a delta (core/model.ts `ModelRequest`), and a carried plan's pinned skills by name and hash
 * (core/policy/types.ts `PlanCarry`).
 */
export interface ModelCallReferences {
  turnId: string;
  system?: string;
  tools?: string;
  delta?: TranscriptDelta;
}

/** The field a decoded value gains; history's own fields are left as they are. */
export const resolvedField = 'resolved';

/** A referenced content as the codec shows it: the content, or why it cannot. */
export type Resolved<T> = T | { unavailable: string };

export const resolvedNote = (where: string) =>
  `Not in workflow history: what its references name, read by skillflow's codec from ${where} when this payload was shown.`;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const isString = (value: unknown): value is string => typeof value === 'string' && value.length > 0;

function isDelta(value: unknown): value is TranscriptDelta {
  return (
    isObject(value) &&
    Number.isInteger(value.baseCount) &&
    isString(value.baseDigest) &&
    Array.isArray(value.append) &&
    (value.repeated === undefined || Array.isArray(value.repeated))
  );
}

/** The references of a model call's input; undefined for any other value, or a model call sent whole. */
export function modelCallReferences(value: unknown): ModelCallReferences | undefined {
  if (!isObject(value) || !isString(value.turnId)) return undefined;
  const refs = isObject(value.promptRefs) ? value.promptRefs : {};
  const found: ModelCallReferences = { turnId: value.turnId };
  if (isString(refs.system)) found.system = refs.system;
  if (isString(refs.tools)) found.tools = refs.tools;
  if (isDelta(value.delta)) found.delta = value.delta;
  return found.system || found.tools || found.delta ? found : undefined;
}

/** The pinned skills a carried plan names (a carry of version 3); undefined for any other value. */
export function carriedSkillReferences(value: unknown): SkillRef[] | undefined {
  if (!isObject(value) || value.version !== 3 || !Array.isArray(value.skills) || !Array.isArray(value.snapshots))
    return undefined;
  const refs = value.skills.filter((ref): ref is SkillRef => isObject(ref) && isString(ref.name) && isString(ref.hash));
  return refs.length > 0 && refs.length === value.skills.length ? refs : undefined;
}

/**
 * Every object inside a JSON value (the value first, then depth first), up to `limit` of them: where a carried plan may
 * sit in a turn's input or result, or a session's state.
 */
export function objectsWithin(value: unknown, limit = 100_000): Array<Record<string, unknown>> {
  const found: Array<Record<string, unknown>> = [];
  const stack: unknown[] = [value];
  let visited = 0;
  while (stack.length > 0 && visited < limit) {
    const next = stack.pop();
    visited++;
    if (Array.isArray(next)) for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]);
    else if (isObject(next)) {
      found.push(next);
      const values = Object.values(next);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return found;
}

/** How much of a model call's conversation the codec shows whole, in bytes of JSON, unless configured. */
export const defaultConversationBytes = 64 * 1024;

/**
 * Where the codec's view of a model call's conversation begins (the index of its first message shown), so that a long
 * turn's decoded history grows with its calls, not with their square: the whole conversation when it fits in
 * `budget` (each message's size given in `sizes`), else the latest messages that fit, but never later than the
 * message before those the call added (`addedFrom`, the delta's base count). So every message is shown whole in the
 * input of the call that added it, next to the response those messages answer, however large they are.
 */
export function conversationViewStart(sizes: number[], addedFrom: number, budget: number): number {
  const mustShowFrom = Math.max(0, Math.min(addedFrom - 1, sizes.length));
  let start = sizes.length;
  let used = 0;
  while (start > 0 && used + sizes[start - 1] <= budget) used += sizes[--start];
  return Math.min(start, mustShowFrom);
}
