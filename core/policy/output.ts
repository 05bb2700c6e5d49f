import { validateJson, type JsonSchema, type SchemaProblem } from '../json-validator';
import { fieldsToJsonSchema } from '../skills/json-schema';
import { outputJsonOf } from '../skills/invocation';
import { SkillToolName } from '../skills/tool-names';
import type { FieldSpec } from '../skills/types';
import { invalidOutputEnd } from './endings';
import type { ActiveSkill, OutputState, PolicyState, Reduction } from './types';
import { allow, refuse } from './verdicts';

/**
 * Structured outputs: a skill's declared output is checked wherever the skill runs. In a turn, the model hands it in
 * with submit_output and a plan's final answer needs it; in a skill run, the final answer is the output. Either way a
 * missing or invalid output gets one corrective round, then ends the run (reason invalid_output).
 */

const outputOf = (state: PolicyState, skill: string): OutputState =>
  state.outputs[skill] ?? { given: false, corrections: 0 };
const withOutput = (state: PolicyState, skill: string, output: OutputState): PolicyState => ({
  ...state,
  outputs: { ...state.outputs, [skill]: output },
});
const listed = (problems: SchemaProblem[]) => problems.map((problem) => problem.message).join('; ');
const schemaText = (fields: FieldSpec[]) => JSON.stringify(fieldsToJsonSchema(fields));

/** The active skill, when it declares an output. */
function declaring(state: PolicyState): ActiveSkill | null {
  return state.active && state.active.output.length > 0 ? state.active : null;
}

/** A missing or invalid output: the one correction, or (once it is used, under the rule) the end of the run. */
function correction(state: PolicyState, skill: string, message: string, problem: string, text?: string): Reduction {
  const output = outputOf(state, skill);
  if (output.corrections >= 1) return { state, verdict: invalidOutputEnd(state, skill, problem, text) };
  return refuse(withOutput(state, skill, { ...output, corrections: output.corrections + 1 }), message);
}

/** submit_output in a turn: the active skill's declared output, validated (defaults filled in). */
export function onOutputSubmitted(state: PolicyState, input: unknown): Reduction {
  if (state.depth > 0)
    return refuse(
      state,
      'In a skill run your final answer is the output: answer with the JSON object itself, without tools.',
    );
  const active = declaring(state);
  if (!active) {
    return refuse(
      state,
      state.active
        ? `Skill ${state.active.name} declares no output: there is nothing to submit.`
        : 'No skill is loaded: there is no output to submit.',
    );
  }
  const schema: JsonSchema = {
    type: 'object',
    properties: { output: fieldsToJsonSchema(active.output) },
    required: ['output'],
    additionalProperties: false,
  };
  const checked = validateJson(input, schema, { applyDefaults: true });
  if (!checked.ok) {
    const problems = listed(checked.problems);
    const message = `The output of skill ${active.name} was not accepted: ${problems}. Call ${SkillToolName.submitOutput} again with {"output": ...} matching this schema: ${schemaText(active.output)}`;
    return correction(state, active.name, message, `its output was still invalid (${problems})`);
  }
  // The tool runs with the validated output (defaults filled in): it becomes the turn's artifact.
  return allow(withOutput(state, active.name, { ...outputOf(state, active.name), given: true }), {
    input: checked.value as Record<string, unknown>,
  });
}

/**
 * The model's final answer, once the plan allows it: in a skill run, the answer must be the declared output; in a
 * turn, a plan whose skill declares an output needs it handed in first.
 */
export function onFinalWithOutput(state: PolicyState, text: string): Reduction {
  const active = declaring(state);
  if (!active) return allow(state);
  if (state.depth > 0) return skillRunAnswer(state, active, text);
  if (state.plan?.skill !== active.name || outputOf(state, active.name).given) return allow(state);
  const message =
    `Skill ${active.name} declares a structured output and it has not been handed in. Call ${SkillToolName.submitOutput} with ` +
    `{"output": ...} matching this schema, then give your final answer: ${schemaText(active.output)}`;
  return correction(state, active.name, message, 'it was never handed in with submit_output');
}

function skillRunAnswer(state: PolicyState, active: ActiveSkill, text: string): Reduction {
  const parsed = outputJsonOf(text);
  const checked = parsed
    ? validateJson(parsed.value, fieldsToJsonSchema(active.output), { path: 'output', applyDefaults: true })
    : null;
  if (checked?.ok)
    return allow(withOutput(state, active.name, { ...outputOf(state, active.name), given: true }), {
      output: checked.value,
    });
  const problems = checked ? listed(checked.problems) : 'the answer is not a JSON object';
  const message =
    `Your final answer is the output of skill ${active.name} and it does not match its Output schema: ${problems}. Answer again with ` +
    `one JSON object matching this schema, and nothing else: ${schemaText(active.output)}`;
  return correction(state, active.name, message, `its final answer was still not valid output (${problems})`, text);
}
