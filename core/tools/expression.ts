/**
 * The calculator's arithmetic: a tokenizer and a recursive-descent parser that evaluates as it parses. No `eval`, no
 * `Function`, no property lookups: only the numbers, operators, constants and functions listed here exist.
 *
 *   expression = term { ("+" | "-") term }
 *   term       = unary { ("*" | "/" | "%") unary }          also implicit: 2pi, 3(4+1)
 *   unary      = ("+" | "-") unary | power
 *   power      = postfix [ ("^" | "**") unary ]             right-associative: 2^3^2 = 2^9; -2^2 = -4
 *   postfix    = primary { "!" }
 *   primary    = NUMBER | CONSTANT | FUNCTION "(" expression { "," expression } ")" | "(" expression ")"
 */

export class ExpressionError extends Error {
  override name = 'ExpressionError';
  constructor(
    message: string,
    /** 0-based character offset of the problem. */
    readonly position: number,
  ) {
    super(message);
  }
}

export const maxExpressionLength = 1000;
const maxNesting = 64;
const maxFactorial = 170;

export const constants: Readonly<Record<string, number>> = { pi: Math.PI, e: Math.E, tau: 2 * Math.PI };

type Fn = { arity: number | [number, number]; apply: (...args: number[]) => number };
const unary = (apply: (x: number) => number): Fn => ({ arity: 1, apply });
export const functions: Readonly<Record<string, Fn>> = {
  sqrt: unary(Math.sqrt),
  cbrt: unary(Math.cbrt),
  abs: unary(Math.abs),
  exp: unary(Math.exp),
  ln: unary(Math.log),
  log10: unary(Math.log10),
  log2: unary(Math.log2),
  log: { arity: [1, 2], apply: (x, base) => (base === undefined ? Math.log10(x) : Math.log(x) / Math.log(base)) },
  sin: unary(Math.sin),
  cos: unary(Math.cos),
  tan: unary(Math.tan),
  asin: unary(Math.asin),
  acos: unary(Math.acos),
  atan: unary(Math.atan),
  sinh: unary(Math.sinh),
  cosh: unary(Math.cosh),
  tanh: unary(Math.tanh),
  floor: unary(Math.floor),
  ceil: unary(Math.ceil),
  trunc: unary(Math.trunc),
  round: { arity: [1, 2], apply: (x, digits) => roundTo(x, digits ?? 0) },
  sign: unary(Math.sign),
  min: { arity: [1, 64], apply: (...xs) => Math.min(...xs) },
  max: { arity: [1, 64], apply: (...xs) => Math.max(...xs) },
  hypot: { arity: [1, 64], apply: (...xs) => Math.hypot(...xs) },
  pow: { arity: 2, apply: (x, y) => x ** y },
  mod: { arity: 2, apply: (x, y) => x % y },
};

function roundTo(x: number, digits: number): number {
  if (!Number.isInteger(digits) || digits < 0 || digits > 15)
    throw new Error('round(x, digits) needs whole digits from 0 to 15');
  const factor = 10 ** digits;
  return Math.round((x + Number.EPSILON * Math.sign(x)) * factor) / factor;
}

type Token =
  | { kind: 'number'; value: number; at: number }
  | { kind: 'name'; value: string; at: number }
  | { kind: 'op'; value: string; at: number }
  | { kind: 'end'; at: number };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s+|(\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[A-Za-z_][A-Za-z0-9_]*|\*\*|[-+*/%^(),!×÷−]/y;
  let at = 0;
  while (at < source.length) {
    pattern.lastIndex = at;
    const match = pattern.exec(source);
    if (!match)
      throw new ExpressionError(`Unexpected character ${JSON.stringify(source[at])} at position ${at + 1}`, at);
    const text = match[0];
    if (/^\s/.test(text)) {
      // whitespace separates tokens
    } else if (/^[\d.]/.test(text)) tokens.push({ kind: 'number', value: Number(text), at });
    else if (/^[A-Za-z_]/.test(text)) tokens.push({ kind: 'name', value: text.toLowerCase(), at });
    else
      tokens.push({
        kind: 'op',
        value: ({ '×': '*', '÷': '/', '−': '-', '**': '^' } as Record<string, string>)[text] ?? text,
        at,
      });
    at += text.length;
  }
  tokens.push({ kind: 'end', at: source.length });
  return tokens;
}

class Parser {
  private index = 0;
  private depth = 0;
  constructor(private readonly tokens: Token[]) {}

  private get next(): Token {
    return this.tokens[this.index];
  }

  private isOp(value: string): boolean {
    const token = this.next;
    return token.kind === 'op' && token.value === value;
  }

  private fail(message: string, token = this.next): never {
    throw new ExpressionError(`${message} at position ${token.at + 1}`, token.at);
  }

  private describe(token: Token): string {
    return token.kind === 'end' ? 'the end of the expression' : `${JSON.stringify(String(token.value))}`;
  }

  parse(): number {
    const value = this.expression();
    if (this.next.kind !== 'end') this.fail(`Unexpected ${this.describe(this.next)}`);
    return value;
  }

  private nested<T>(inside: () => T): T {
    if (++this.depth > maxNesting) this.fail(`The expression is nested more than ${maxNesting} levels deep`);
    try {
      return inside();
    } finally {
      this.depth--;
    }
  }

  private expression(): number {
    let value = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const op = (this.tokens[this.index++] as { value: string }).value;
      const right = this.term();
      value = op === '+' ? value + right : value - right;
    }
    return value;
  }

  private startsOperand(): boolean {
    const token = this.next;
    return token.kind === 'number' || token.kind === 'name' || (token.kind === 'op' && token.value === '(');
  }

  private term(): number {
    let value = this.unary();
    for (;;) {
      if (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
        const token = this.tokens[this.index++] as { value: string; at: number };
        const right = this.unary();
        if ((token.value === '/' || token.value === '%') && right === 0)
          this.fail(token.value === '/' ? 'Division by zero' : 'Remainder of a division by zero', token as Token);
        value = token.value === '*' ? value * right : token.value === '/' ? value / right : value % right;
      } else if (this.startsOperand()) {
        value *= this.unary(); // implicit multiplication: 2pi, 3(1+2)
      } else {
        return value;
      }
    }
  }

  private unary(): number {
    if (this.isOp('-') || this.isOp('+')) {
      const negative = (this.tokens[this.index++] as { value: string }).value === '-';
      const value = this.nested(() => this.unary());
      return negative ? -value : value;
    }
    return this.power();
  }

  private power(): number {
    const base = this.postfix();
    if (!this.isOp('^')) return base;
    this.index++;
    const exponent = this.nested(() => this.unary());
    return base ** exponent;
  }

  private postfix(): number {
    let value = this.primary();
    while (this.isOp('!')) {
      const token = this.tokens[this.index++];
      if (!Number.isInteger(value) || value < 0 || value > maxFactorial)
        this.fail(`Factorial needs a whole number from 0 to ${maxFactorial}`, token);
      let product = 1;
      for (let n = 2; n <= value; n++) product *= n;
      value = product;
    }
    return value;
  }

  private primary(): number {
    const token = this.next;
    if (token.kind === 'number') {
      this.index++;
      return token.value;
    }
    if (token.kind === 'name') {
      this.index++;
      const isFunction = Object.hasOwn(functions, token.value);
      if (isFunction && this.isOp('(')) return this.call(token.value, token);
      if (Object.hasOwn(constants, token.value)) return constants[token.value];
      if (isFunction) this.fail(`Function ${token.value} needs its arguments in parentheses`);
      this.fail(
        `Unknown name ${JSON.stringify(token.value)}; known are ${Object.keys(constants).join(', ')} and the functions ${Object.keys(functions).join(', ')}`,
        token,
      );
    }
    if (this.isOp('(')) {
      this.index++;
      const value = this.nested(() => this.expression());
      if (!this.isOp(')')) this.fail(`Expected ")" but found ${this.describe(this.next)}`);
      this.index++;
      return value;
    }
    return this.fail(`Expected a number, a name or "(" but found ${this.describe(token)}`);
  }

  private call(name: string, at: Token): number {
    this.index++; // (
    const args: number[] = [];
    if (!this.isOp(')')) {
      for (;;) {
        args.push(this.nested(() => this.expression()));
        if (!this.isOp(',')) break;
        this.index++;
      }
    }
    if (!this.isOp(')')) this.fail(`Expected "," or ")" in ${name}(...) but found ${this.describe(this.next)}`);
    this.index++;
    const { arity, apply } = functions[name];
    const [min, max] = typeof arity === 'number' ? [arity, arity] : arity;
    if (args.length < min || args.length > max) {
      this.fail(
        `${name} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, not ${args.length}`,
        at,
      );
    }
    try {
      return apply(...args);
    } catch (err) {
      return this.fail((err as Error).message, at);
    }
  }
}

/** Evaluates an arithmetic expression; throws ExpressionError (with the position) for anything it cannot evaluate. */
export function evaluateExpression(source: string): number {
  if (source.length > maxExpressionLength)
    throw new ExpressionError(`The expression is longer than ${maxExpressionLength} characters`, maxExpressionLength);
  if (source.trim() === '') throw new ExpressionError('The expression is empty', 0);
  const value = new Parser(tokenize(source)).parse();
  if (Number.isNaN(value))
    throw new ExpressionError('The result is not a number (e.g. the square root of a negative number)', 0);
  if (!Number.isFinite(value)) throw new ExpressionError('The result is too large to represent', 0);
  return value;
}

/** A result as the model reads it: up to 15 significant digits, without float noise such as 0.30000000000000004. */
export function formatNumber(value: number): string {
  if (Object.is(value, -0)) return '0';
  return String(Number(value.toPrecision(15)));
}
