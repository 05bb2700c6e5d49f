import { evaluateExpression, ExpressionError, formatNumber, maxExpressionLength } from '../../../core/tools/expression';
import { defineTool, ToolError, Type } from '../define-tool';

/** Arithmetic the model should not do in its head: a real expression parser (core/tools/expression.ts), never eval. */
export const calculator = defineTool({
  name: 'calculator',
  description:
    'Evaluate an arithmetic expression exactly and return its value. Use it for every calculation instead of computing ' +
    'in your head. Supports + - * / % ^ (or **), parentheses, factorial (!), the constants pi, e, tau and the functions ' +
    'sqrt, cbrt, abs, exp, ln, log (base 10, or log(x, base)), log2, log10, sin, cos, tan (radians), asin, acos, atan, ' +
    'sinh, cosh, tanh, floor, ceil, trunc, round (round(x, digits)), sign, min, max, hypot, pow, mod.',
  category: 'math',
  input: Type.Object(
    {
      expression: Type.String({
        minLength: 1,
        maxLength: maxExpressionLength,
        description: 'The expression, e.g. (1200 * 0.035) / 12',
      }),
    },
    { additionalProperties: false },
  ),
  idempotent: true,
  timeout: '5s',
  retry: { maximumAttempts: 1 },
  run({ expression }) {
    try {
      return `${expression} = ${formatNumber(evaluateExpression(expression))}`;
    } catch (err) {
      if (err instanceof ExpressionError)
        throw new ToolError(`Cannot evaluate ${JSON.stringify(expression)}: ${err.message}.`);
      throw err;
    }
  },
});
