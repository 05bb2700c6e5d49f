/**
 * How a model call asks for thinking and effort, by model (REFERENCE.md section 8; Anthropic's thinking docs): models
 * from 4.7 on (and Mythos Preview) take only `thinking: {type: "adaptive"}` with `output_config.effort` and refuse the
 * budget form with a 400; the 4.6 models take both (the budget form deprecated); 4.5 and older take only the budget form.
 */
export const efforts = ['low', 'medium', 'high', 'xhigh', 'max'] as const;
export type Effort = (typeof efforts)[number];

export const isEffort = (value: unknown): value is Effort => (efforts as readonly unknown[]).includes(value);

/** Which thinking requests a model takes. */
export type ThinkingForms = 'adaptive' | 'adaptive-or-budget' | 'budget';

/** `claude-sonnet-4-5-20250929`, `anthropic.claude-opus-4-6-v1`; and the older order, `claude-3-7-sonnet-20250219`. */
const familyFirst = /claude-(?:opus|sonnet|haiku|mythos|fable)-(\d+)(?:-(\d{1,2})(?!\d))?/;
const versionFirst = /claude-(\d+)(?:-(\d{1,2}))?-(?:opus|sonnet|haiku)/;

/** The model's version (4.6 -> [4, 6]) from its id, gateway prefixes and date suffixes allowed; null when it names none. */
export function modelVersionOf(model: string): [number, number] | null {
  const match = familyFirst.exec(model) ?? versionFirst.exec(model);
  return match ? [Number(match[1]), Number(match[2] ?? 0)] : null;
}

/** A model whose id names no version (a new family, a gateway alias) is taken to be current: adaptive. */
export function thinkingFormsOf(model: string): ThinkingForms {
  if (/claude-mythos-preview/.test(model)) return 'adaptive';
  const version = modelVersionOf(model);
  if (!version) return 'adaptive';
  const [major, minor] = version;
  if (major > 4 || (major === 4 && minor >= 7)) return 'adaptive';
  return major === 4 && minor === 6 ? 'adaptive-or-budget' : 'budget';
}

export interface ThinkingSettings {
  /** Whether the call asks for thinking at all; off sends no `thinking` field (the model's own default). */
  thinking: boolean;
  /** For models that take only the budget form; absent: half of `maxTokens`. */
  budgetTokens?: number;
  effort?: Effort;
  maxTokens: number;
}

export const minThinkingBudgetTokens = 1024;

export type ThinkingParams = {
  thinking?: { type: 'adaptive' } | { type: 'enabled'; budget_tokens: number };
  output_config?: { effort: Effort };
};

/**
 * The request fields for these settings on this model: adaptive thinking and `output_config.effort` where the model
 * takes them; the budget form (and no effort) on a model that takes only it, and no thinking when `max_tokens` leaves
 * no room for the least budget.
 */
export function thinkingParamsFor(model: string, settings: ThinkingSettings): ThinkingParams {
  if (thinkingFormsOf(model) !== 'budget') {
    return {
      ...(settings.thinking ? { thinking: { type: 'adaptive' } } : {}),
      ...(settings.effort ? { output_config: { effort: settings.effort } } : {}),
    };
  }
  if (!settings.thinking) return {};
  const budget = settings.budgetTokens ?? Math.floor(settings.maxTokens / 2);
  return budget >= minThinkingBudgetTokens && budget < settings.maxTokens
    ? { thinking: { type: 'enabled', budget_tokens: budget } }
    : {};
}
