import { validateJson, type JsonSchema } from '../json-validator';
import { outputJsonOf } from '../skills/invocation';
import type { SkillRunResult } from '../skill-runs';
import type { TurnError } from '../schemas/turn';
import { missingOutputEnding, type CompletedEnding, type Ending, type FailedEnding } from './endings';
import type { Reason } from './reasons';

/** What a skill run returns of its ending; its identity, usage and records the workflow adds. */
export type SkillRunEnding = Pick<SkillRunResult, 'status' | 'reason' | 'success' | 'output' | 'error'>;

/** What a skill run's ending means for its invoker: the result, and the run's own ending when it changes. */
export interface SkillRunOutcome {
  result: SkillRunEnding;
  /** The run ended failed after all (it declares an output and gave no valid one): its ending, before it is published. */
  replaced?: FailedEnding;
  /** The validated output of a skill that declares one: the run's artifact. */
  artifact?: { value: unknown };
}

export interface SkillRunEnded {
  skill: string;
  ending: Ending;
  /** The schema of the skill's declared output; null when it declares none (its output is the answer's text). */
  outputSchema: JsonSchema | null;
  /** The final answer the policy accepted as the declared output, validated. */
  accepted: { value: unknown } | undefined;
}

/**
 * A success carries its output (the validated JSON a skill that declares an output gave as its final answer, else the
 * answer's text); anything else carries why it did not finish.
 */
export function skillRunOutcome(ended: SkillRunEnded): SkillRunOutcome {
  const { skill, ending } = ended;
  if (ending.status !== 'completed') {
    const why = ending.status === 'cancelled' ? `it was cancelled (${ending.reason})` : `it failed (${ending.reason})`;
    const message = `Skill ${skill} did not finish: ${why}.${ending.output ? ` Its last words: ${ending.output}` : ''}`;
    const error = ending.status === 'failed' ? ending.error : { code: ending.reason, message };
    return { result: unfinished(ending.status, ending.reason, error) };
  }
  if (!ended.outputSchema) return { result: finished(ending, ending.output ?? '') };
  const output = ended.accepted ?? lastWordOutput(ending.output ?? '', ended.outputSchema);
  if (!output) {
    const replaced = missingOutputEnding(skill, ending);
    return { result: unfinished('failed', 'invalid_output', replaced.error), replaced };
  }
  return { result: finished(ending, output.value), artifact: output };
}

function finished(ending: CompletedEnding, output: unknown): SkillRunEnding {
  return { status: 'completed', ...(ending.reason ? { reason: ending.reason } : {}), success: true, output };
}

function unfinished(status: 'failed' | 'cancelled', reason: Reason, error: TurnError): SkillRunEnding {
  return { status, reason, success: false, output: null, error };
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
