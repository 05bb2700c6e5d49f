import { validateJson, type JsonSchema } from '../json-validator';
import { outputJsonOf } from '../skills/invocation';
import type { SkillRunResult } from '../skill-runs';
import type { TurnError } from '../schemas/turn';
import { missingOutputEnding, type Ending } from './endings';

/** What a skill run returns of its ending; its identity, usage and records the workflow adds. */
export type SkillRunEnding = Pick<SkillRunResult, 'status' | 'reason' | 'success' | 'output' | 'error'>;

export interface SkillRunEnded {
  skill: string;
  ending: Ending;
  /** The schema of the skill's declared output; null when it declares none (its output is the answer's text). */
  outputSchema: JsonSchema | null;
  /** The final answer the policy accepted as the declared output, validated. */
  accepted: { value: unknown } | undefined;
}

/** A skill run's ending as decided, once: with the declared output it carries, when it completed with one. */
export interface SettledEnding {
  ending: Ending;
  output?: { value: unknown };
}

/**
 * A skill run's ending, decided once when the run ends: a skill that declares an output completes only with a valid
 * one, the answer the policy accepted as its final answer, or else a last word the policy never saw as one (after the
 * round budget, or an answer the output limit cut), checked here; without one it fails (`invalid_output`).
 */
export function settleSkillEnding(ended: SkillRunEnded): SettledEnding {
  const { ending, outputSchema } = ended;
  if (ending.status !== 'completed' || !outputSchema) return { ending };
  const output = ended.accepted ?? lastWordOutput(ending.output ?? '', outputSchema);
  return output ? { ending, output } : { ending: missingOutputEnding(ended.skill, ending) };
}

/**
 * What a skill run returns of its settled ending: a success carries its output (the declared output, else the
 * answer's text); anything else carries why it did not finish.
 */
export function skillRunResultOf(skill: string, settled: SettledEnding): SkillRunEnding {
  const { ending, output } = settled;
  if (ending.status === 'completed') {
    const value = output ? output.value : (ending.output ?? '');
    return { status: 'completed', ...(ending.reason ? { reason: ending.reason } : {}), success: true, output: value };
  }
  const why = ending.status === 'cancelled' ? `it was cancelled (${ending.reason})` : `it failed (${ending.reason})`;
  const message = `Skill ${skill} did not finish: ${why}.${ending.output ? ` Its last words: ${ending.output}` : ''}`;
  const error: TurnError = ending.status === 'failed' ? ending.error : { code: ending.reason, message };
  return { status: ending.status, reason: ending.reason, success: false, output: null, error };
}

/** An answer the policy never saw as a final answer (a last word after the round budget): valid output, or none. */
function lastWordOutput(text: string, schema: JsonSchema): { value: unknown } | undefined {
  const parsed = outputJsonOf(text);
  const checked = parsed && validateJson(parsed.value, schema, { applyDefaults: true });
  return checked && checked.ok ? { value: checked.value } : undefined;
}

/** How Temporal closed a run that returned no result of its own. */
export type Closure =
  { kind: 'cancelled' } | { kind: 'terminated' } | { kind: 'timed_out' } | { kind: 'failed'; message: string };

/** A skill run that ended without a result of its own: cancelled by hand, terminated, timed out or failed in Temporal. */
export function closedSkillRunEnding(
  skill: string,
  closure: Closure,
): Pick<SkillRunResult, 'status' | 'reason' | 'error'> {
  const run = `The skill run of ${skill}`;
  switch (closure.kind) {
    case 'cancelled':
      return {
        status: 'cancelled',
        reason: 'cancelled',
        error: { code: 'cancelled', message: `${run} was cancelled.` },
      };
    case 'terminated':
      return {
        status: 'failed',
        reason: 'terminated',
        error: { code: 'terminated', message: `${run} was terminated in Temporal.` },
      };
    case 'timed_out':
      return {
        status: 'failed',
        reason: 'timed_out',
        error: { code: 'timed_out', message: `${run} timed out in Temporal.` },
      };
    case 'failed':
      return {
        status: 'failed',
        reason: 'workflow_failed',
        error: { code: 'workflow_failed', message: `${run} failed: ${closure.message}` },
      };
  }
}

/**
 * A turn that ended without a result of its own, as its session records it: cancelled, terminated, timed out, or failed
 * in Temporal (`message`: the failure as it may be shown).
 */
export function closedTurnEnding(
  closure: Closure,
): Required<Pick<SkillRunResult, 'status' | 'reason'>> & Pick<SkillRunResult, 'error'> {
  switch (closure.kind) {
    case 'cancelled':
      return { status: 'cancelled', reason: 'cancelled' };
    case 'terminated':
      return {
        status: 'failed',
        reason: 'terminated',
        error: { code: 'terminated', message: 'The turn was terminated in Temporal.' },
      };
    case 'timed_out':
      return {
        status: 'failed',
        reason: 'timed_out',
        error: { code: 'timed_out', message: 'The turn timed out in Temporal.' },
      };
    case 'failed':
      return {
        status: 'failed',
        reason: 'workflow_failed',
        error: { code: 'workflow_failed', message: closure.message },
      };
  }
}
