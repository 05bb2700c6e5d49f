import { ModelErrorType } from './model';
import type { TurnError } from './schemas/turn';
import { SkillErrorType } from './skills/errors';

/** What a client and the model get for an error that is not typed: no message of code they cannot act on. */
export const internalError: TurnError = {
  code: 'internal_error',
  message: "Something went wrong inside skillflow; the operators have the details in the worker's log.",
};

/**
 * The failure types whose messages are written for the people and the model who read them (what is wrong, and what
 * to do). Any other error's text (an EACCES with a path, a stack's message, a library's internals) stays in the log.
 * A thrown error's `name` is its failure type once Temporal carries it out of an activity.
 */
export const typedErrorTypes: ReadonlySet<string> = new Set<string>([
  ...Object.values(SkillErrorType),
  ...Object.values(ModelErrorType),
  // lib/tools/define-tool.ts: a tool's own message for the model.
  'ToolError',
  // core/tools/expression.ts: what the calculator could not evaluate, with the position.
  'ExpressionError',
  // Temporal's own: an activity or child that ran out of time ("Activity task timed out").
  'TimeoutFailure',
]);

/** The first typed error in an error's chain of causes (Temporal wraps an activity's: ActivityFailure → ApplicationFailure). */
export function typedErrorOf(error: unknown): { type: string; message: string } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    const type = (current as { type?: unknown }).type;
    if (typeof type === 'string' && typedErrorTypes.has(type)) return { type, message: current.message };
    if (typedErrorTypes.has(current.name)) return { type: current.name, message: current.message };
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The error as a client or the model may see it: a typed error as it is, anything else `internal_error`. */
export function publicErrorOf(error: unknown): TurnError {
  const typed = typedErrorOf(error);
  return typed ? { code: typed.type, message: typed.message } : { ...internalError };
}

/** Everything an error says, through its causes: for the log, never for a client or the model. */
export function errorDetail(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current !== undefined && current !== null; depth++) {
    if (!(current instanceof Error)) {
      parts.push(String(current));
      break;
    }
    const type = (current as { type?: unknown }).type;
    parts.push(`${current.name}${typeof type === 'string' ? ` (${type})` : ''}: ${current.message}`);
    current = (current as { cause?: unknown }).cause;
  }
  return parts.join(' <- ');
}
