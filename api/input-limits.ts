import type { Config } from '../lib/config';
import { HttpError } from './errors';
import type { CheckpointAnswer } from '../core/protocol';

/** How deep a checkpoint's `overrides` and a typed start's `params` may nest. */
export const maxNestingDepth = 16;
/** How large a checkpoint's `overrides` may be as JSON. */
export const maxOverrideBytes = 64 * 1024;
/** A `choice` names one of a checkpoint's options. */
export const maxChoiceChars = 1_000;

/** Bidirectional embeddings, overrides and isolates: they make text read differently from what it says. */
const bidiControls = /[\u202A-\u202E\u2066-\u2069]/g;
/** C0 controls other than tab, line feed and carriage return, and DEL. */
const controls = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one. */
const loneSurrogates = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text a user sends, as the model and the records get it: lone surrogates (not Unicode; JSON lets `\ud800` through)
 * become U+FFFD, NUL and the other control characters go (tab and line breaks stay), and so do the bidirectional
 * controls that can make a message show one thing and say another.
 */
export function normalizeText(text: string): string {
  return text.replace(loneSurrogates, '\uFFFD').replace(controls, '').replace(bidiControls, '');
}

type TextLimits = Pick<Config, 'maxMessageChars' | 'maxMessageBytes'>;

/** A text within SKILLFLOW_MAX_MESSAGE_CHARS characters and SKILLFLOW_MAX_MESSAGE_BYTES bytes as UTF-8 (400 otherwise). */
function checkLength(field: string, text: string, config: TextLimits, code: string): void {
  if (text.length > config.maxMessageChars) {
    throw new HttpError(400, code, `${field} is ${text.length} characters; the limit is ${config.maxMessageChars}.`);
  }
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > config.maxMessageBytes) {
    throw new HttpError(
      400,
      code,
      `${field} is ${bytes} bytes as UTF-8; the limit is ${config.maxMessageBytes} bytes (SKILLFLOW_MAX_MESSAGE_BYTES).`,
    );
  }
}

/** The message of a new turn, normalized and within the message limits (400 otherwise). */
export function checkedMessage(message: string, config: TextLimits): string {
  const text = normalizeText(message);
  checkLength('message', text, config, 'message_too_long');
  if (text.trim() === '')
    throw new HttpError(400, 'invalid_request', 'message is empty once control characters are removed.');
  return text;
}

/**
 * A checkpoint decision within bounds, its text normalized like a message: `answer` within the message limits,
 * `choice` within 1,000 characters, `overrides` at most 16 levels deep and 64 KiB as JSON. Anything else is a 400
 * naming the field, before Temporal sees it.
 */
export function checkedAnswer(answer: CheckpointAnswer, config: TextLimits): CheckpointAnswer {
  const checked: CheckpointAnswer = { ...answer };
  if (answer.answer !== undefined) {
    checked.answer = normalizeText(answer.answer);
    checkLength('answer', checked.answer, config, 'answer_too_long');
  }
  if (answer.note !== undefined) checked.note = normalizeText(answer.note);
  if (answer.choice !== undefined) {
    checked.choice = normalizeText(answer.choice);
    if (checked.choice.length > maxChoiceChars) {
      throw new HttpError(
        400,
        'invalid_request',
        `choice is ${checked.choice.length} characters; the limit is ${maxChoiceChars}.`,
      );
    }
  }
  if (answer.overrides !== undefined) {
    checked.overrides = normalizedValue(answer.overrides, 1, 'overrides') as Record<string, unknown>;
    const bytes = Buffer.byteLength(JSON.stringify(checked.overrides));
    if (bytes > maxOverrideBytes)
      throw new HttpError(
        400,
        'invalid_request',
        `overrides are ${bytes} bytes as JSON; the limit is ${maxOverrideBytes}.`,
      );
  }
  return checked;
}

/** A typed start's params, cleaned like a message: every string and every key, at every depth (at most 16 levels). */
export function checkedParams(params: Record<string, unknown>): Record<string, unknown> {
  return normalizedValue(params, 1, 'params') as Record<string, unknown>;
}

/** The JSON values a client sends beside its text, and whose parameters they give. */
const nestedValues = { overrides: "the checkpoint's", params: "the skill's" } as const;

function normalizedValue(value: unknown, depth: number, field: keyof typeof nestedValues): unknown {
  if (typeof value === 'string') return normalizeText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > maxNestingDepth) {
    throw new HttpError(
      400,
      'invalid_request',
      `${field} nest deeper than ${maxNestingDepth} levels; send plain values for ${nestedValues[field]} parameters.`,
    );
  }
  if (Array.isArray(value)) return value.map((item) => normalizedValue(item, depth + 1, field));
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [normalizeText(key), normalizedValue(item, depth + 1, field)]),
  );
}
