import { canonicalSkillName } from './names';
import { isPlainObject, validateJson, type JsonSchema, type SchemaProblem } from '../json-validator';
import type { HistoryMessage } from '../schemas/skill-runs';
import { fieldsToJsonSchema } from './json-schema';
import { closest } from './problems';
import { invocationLimits } from './tool-definitions';
import { SkillToolName } from './tool-names';
import type { FieldSpec, SkillManifest } from './types';

/**
 * invoke_skill's input, checked before any skill run starts: the skill, a task, an optional history of plain text
 * messages, and params valid against the skill's declared parameters (the core validator, defaults filled in).
 */
export interface Invocation {
  skill: string;
  task: string;
  history: HistoryMessage[];
  /** Validated, with the declared defaults of those left out. */
  params: Record<string, unknown>;
}

/** What the model gets for a call that starts nothing: seed 002's error shape, with every problem found. */
export interface InvalidInvocation {
  skill_id: string | null;
  success: false;
  error: string;
  problems: SchemaProblem[];
  /** The skill's declared parameters (when the skill is known): what a valid call passes. */
  expected_parameters?: FieldSpec[];
}

export type InvocationCheck = { ok: true; invocation: Invocation } | { ok: false; result: InvalidInvocation };

const historySchema: JsonSchema = {
  type: 'array',
  items: {
    type: 'object',
    properties: { role: { type: 'string', enum: ['user', 'assistant'] }, content: { type: 'string' } },
    required: ['role', 'content'],
    additionalProperties: false,
  },
};

const inputSchema: JsonSchema = {
  type: 'object',
  properties: {
    skill: { type: 'string' },
    task: { type: 'string' },
    params: { type: 'object' },
    history: historySchema,
  },
  required: ['skill', 'task'],
  additionalProperties: false,
};

/** The JSON Schema of a skill's declared parameters (an object that takes nothing when it declares none). */
export const parametersSchema = (skill: Pick<SkillManifest, 'parameters'>): JsonSchema =>
  fieldsToJsonSchema(skill.parameters);

/** Checks a skill's parameters as given (by invoke_skill or the API): the value with defaults filled in, or the problems. */
export function checkParams(
  skill: Pick<SkillManifest, 'parameters'>,
  params: unknown,
  path = 'params',
): { ok: true; value: Record<string, unknown> } | { ok: false; problems: SchemaProblem[] } {
  const checked = validateJson(params ?? {}, parametersSchema(skill), { path, applyDefaults: true });
  return checked.ok
    ? { ok: true, value: checked.value as Record<string, unknown> }
    : { ok: false, problems: checked.problems };
}

export function checkInvocation(input: unknown, skills: SkillManifest[]): InvocationCheck {
  const shape = validateJson(input, inputSchema);
  const named = isPlainObject(input) && typeof input.skill === 'string' ? canonicalSkillName(input.skill) : null;
  const manifest = skills.find((candidate) => candidate.name === named);
  const problems: SchemaProblem[] = shape.ok ? [] : [...shape.problems];
  if (isPlainObject(input)) {
    if (named !== null && !manifest) problems.push(unknownSkill(named, skills));
    if (typeof input.task === 'string') problems.push(...textProblems(input.task, 'task'));
    if (Array.isArray(input.history)) problems.push(...historyProblems(input.history));
    if (manifest && (input.params === undefined || isPlainObject(input.params))) {
      const params = checkParams(manifest, input.params);
      if (!params.ok) problems.push(...params.problems);
      else if (problems.length === 0) {
        return {
          ok: true,
          invocation: {
            skill: manifest.name,
            task: input.task as string,
            history: (input.history ?? []) as HistoryMessage[],
            params: params.value,
          },
        };
      }
    }
  }
  const listed = problems.map((problem) => problem.message).join('; ');
  return {
    ok: false,
    result: {
      skill_id: named,
      success: false,
      error: `Invalid ${SkillToolName.invokeSkill} call, nothing was started: ${listed}.`,
      problems,
      ...(manifest ? { expected_parameters: manifest.parameters } : {}),
    },
  };
}

function unknownSkill(name: string, skills: SkillManifest[]): SchemaProblem {
  const names = skills.map((skill) => skill.name);
  const near = closest(name, names);
  return {
    path: 'skill',
    rule: 'enum',
    allowed: names,
    message: `skill "${name}" is not a skill of the catalog${near ? ` (did you mean "${near}"?)` : ''}`,
  };
}

function textProblems(text: string, path: string): SchemaProblem[] {
  if (text.trim() === '')
    return [{ path, rule: 'required', message: `${path} is empty; say what the skill should do` }];
  if (text.length > invocationLimits.textChars) {
    return [
      {
        path,
        rule: 'maximum',
        allowed: { maximum: invocationLimits.textChars },
        message: `${path} has ${text.length} characters, more than ${invocationLimits.textChars}`,
      },
    ];
  }
  return [];
}

/** A history is a conversation: user and assistant text in turn, from a user message to an assistant one (the task follows). */
function historyProblems(history: unknown[]): SchemaProblem[] {
  if (history.length > invocationLimits.historyMessages) {
    return [
      {
        path: 'history',
        rule: 'maximum',
        allowed: { maximum: invocationLimits.historyMessages },
        message: `history has ${history.length} messages, more than ${invocationLimits.historyMessages}`,
      },
    ];
  }
  const problems: SchemaProblem[] = [];
  history.forEach((message, index) => {
    if (!isPlainObject(message)) return;
    const expected = index % 2 === 0 ? 'user' : 'assistant';
    if (message.role !== expected && (message.role === 'user' || message.role === 'assistant')) {
      problems.push({
        path: `history[${index}].role`,
        rule: 'enum',
        allowed: [expected],
        message: `history[${index}].role is ${message.role}; the history alternates from user to assistant, so it must be ${expected}`,
      });
    }
    if (typeof message.content === 'string')
      problems.push(...textProblems(message.content, `history[${index}].content`));
  });
  if (history.length % 2 === 1) {
    problems.push({
      path: 'history',
      rule: 'required',
      message:
        "history ends with a user message; end it with the assistant's reply (the task is the next user message)",
    });
  }
  return problems;
}

/** seed 002's result of a skill run: the skill, its output, whether it succeeded, and why not. */
export interface InvocationResult {
  skill_id: string;
  output: unknown;
  success: boolean;
  error?: string;
}

/**
 * A skill run's final answer as its output: the answer is JSON, or holds one fenced ```json block (the last one
 * counts); undefined when there is none that parses.
 */
export function outputJsonOf(text: string): { value: unknown } | undefined {
  const whole = parseJson(text.trim());
  if (whole) return whole;
  const blocks = [...text.matchAll(/```(?:json)?[ \t]*\n([\s\S]*?)\n[ \t]*```/g)];
  return blocks.length > 0 ? parseJson(blocks[blocks.length - 1][1]) : undefined;
}

function parseJson(text: string): { value: unknown } | undefined {
  if (!/^[[{]/.test(text)) return undefined;
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** A skill's declared output as JSON Schema. */
export const outputSchema = (skill: Pick<SkillManifest, 'output'>): JsonSchema => fieldsToJsonSchema(skill.output);
