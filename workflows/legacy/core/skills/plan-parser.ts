import { PlanSyntaxError } from './errors';
import { isKebabWord, isSnakeName, kebabWordProblem } from './names';
import { distinctNames, type PlanNode } from './plan-ast';
import type { PlanSpec } from './types';

/**
 * Parser for the plan language (docs/skills.md):
 *
 *   plan        = alternative ;
 *   alternative = sequence { "|" sequence } ;
 *   sequence    = quantified { quantified } ;
 *   quantified  = atom [ "?" | "*" | "+" ] ;
 *   atom        = STEP | "checkpoint:" CHECKPOINT | "(" alternative ")" ;
 */

export const maxPlanLength = 2000;

type Punctuation = '(' | ')' | '|' | '?' | '*' | '+';
type Token =
  | { type: 'step' | 'checkpoint'; name: string; column: number }
  | { type: Punctuation; column: number }
  | { type: 'end'; column: number };

const punctuation = new Set<string>(['(', ')', '|', '?', '*', '+']);
const checkpointPrefix = 'checkpoint:';

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const char = source[i];
    if (/\s/.test(char)) {
      i += 1;
      continue;
    }
    if (punctuation.has(char)) {
      tokens.push({ type: char as Punctuation, column: i + 1 });
      i += 1;
      continue;
    }
    const start = i;
    while (i < source.length && !/\s/.test(source[i]) && !punctuation.has(source[i])) i += 1;
    tokens.push(wordToken(source.slice(start, i), start + 1));
  }
  tokens.push({ type: 'end', column: source.length + 1 });
  return tokens;
}

function wordToken(word: string, column: number): Token {
  if (word.startsWith(checkpointPrefix)) {
    const name = word.slice(checkpointPrefix.length);
    if (!isSnakeName(name)) {
      throw new PlanSyntaxError(
        `"${word}" is not a valid checkpoint`,
        column,
        'write checkpoint:NAME, where NAME starts with a-z and has only a-z, 0-9 and _ (at most 64 characters), e.g. checkpoint:exam_params.',
      );
    }
    return { type: 'checkpoint', name, column };
  }
  if (word.includes(':')) {
    throw new PlanSyntaxError(
      `"${word}" has an unknown prefix`,
      column,
      'checkpoints are written checkpoint:NAME; steps are bare subskill names.',
    );
  }
  if (!isKebabWord(word)) {
    throw new PlanSyntaxError(
      `step "${word}" ${kebabWordProblem(word) ?? 'is not a valid subskill name'}`,
      column,
      'a step is the name of a file subskills/NAME.md: lowercase a-z, 0-9 and single hyphens; use ( ) | ? * + only as operators.',
    );
  }
  return { type: 'step', name: word, column };
}

class Parser {
  private position = 0;
  constructor(private readonly tokens: Token[]) {}

  parsePlan(): PlanNode {
    if (this.peek().type === 'end') {
      throw new PlanSyntaxError(
        'the plan is empty',
        1,
        'name at least one step or checkpoint, or remove metadata.plan.',
      );
    }
    const node = this.parseAlternative();
    const next = this.peek();
    if (next.type === ')')
      throw new PlanSyntaxError('")" has no matching "("', next.column, 'remove it or add the "(" it closes.');
    return node;
  }

  private parseAlternative(): PlanNode {
    const options = [this.parseSequence()];
    while (this.peek().type === '|') {
      this.position += 1;
      options.push(this.parseSequence());
    }
    return options.length === 1
      ? options[0]
      : { kind: 'choice', options: options.flatMap((o) => (o.kind === 'choice' ? o.options : [o])) };
  }

  private parseSequence(): PlanNode {
    const items: PlanNode[] = [];
    for (let next = this.peek(); next.type !== 'end' && next.type !== ')' && next.type !== '|'; next = this.peek()) {
      items.push(this.parseQuantified());
    }
    if (items.length === 0) throw this.emptyAlternative();
    const flat = items.flatMap((item) => (item.kind === 'sequence' ? item.items : [item]));
    return flat.length === 1 ? flat[0] : { kind: 'sequence', items: flat };
  }

  private emptyAlternative(): PlanSyntaxError {
    const next = this.peek();
    const previous = this.tokens[this.position - 1];
    if (previous?.type === '(' && next.type === ')') {
      return new PlanSyntaxError(
        'empty group "()"',
        previous.column,
        'put at least one step or checkpoint between the parentheses, or remove them.',
      );
    }
    return new PlanSyntaxError(
      '"|" needs a step, checkpoint or group on both sides',
      next.column,
      'remove the extra "|" or add the missing alternative.',
    );
  }

  private parseQuantified(): PlanNode {
    const item = this.parseAtom();
    const next = this.peek();
    if (next.type !== '?' && next.type !== '*' && next.type !== '+') return item;
    this.position += 1;
    const after = this.peek();
    if (after.type === '?' || after.type === '*' || after.type === '+') {
      throw new PlanSyntaxError(
        `two quantifiers in a row ("${next.type}${after.type}")`,
        after.column,
        'keep one of ?, * and +, or group first: (step+)?',
      );
    }
    const kind = next.type === '?' ? 'optional' : next.type === '*' ? 'zeroOrMore' : 'oneOrMore';
    return { kind, item };
  }

  private parseAtom(): PlanNode {
    const token = this.peek();
    this.position += 1;
    switch (token.type) {
      case 'step':
      case 'checkpoint':
        return { kind: token.type, name: token.name };
      case '(': {
        const inner = this.parseAlternative();
        const close = this.peek();
        if (close.type !== ')') throw new PlanSyntaxError('"(" is never closed', token.column, 'add the matching ")".');
        this.position += 1;
        return inner;
      }
      case '?':
      case '*':
      case '+':
        throw new PlanSyntaxError(
          `"${token.type}" has nothing to repeat`,
          token.column,
          'put the quantifier right after a step, checkpoint or ")".',
        );
      default:
        throw new PlanSyntaxError(
          `unexpected "${token.type}"`,
          token.column,
          'check the plan against the grammar in docs/skills.md.',
        );
    }
  }

  private peek(): Token {
    return this.tokens[this.position];
  }
}

/** Parses plan text into its tree; throws PlanSyntaxError with the column and the fix. */
export function parsePlan(source: string): PlanNode {
  if (source.length > maxPlanLength) {
    throw new PlanSyntaxError(
      `the plan is ${source.length} characters long; the limit is ${maxPlanLength}`,
      maxPlanLength + 1,
      'split the skill into smaller skills.',
    );
  }
  return new Parser(tokenize(source)).parsePlan();
}

export function planSpecOf(source: string): PlanSpec {
  const root = parsePlan(source);
  return { source, root, steps: distinctNames(root, 'step'), checkpoints: distinctNames(root, 'checkpoint') };
}
