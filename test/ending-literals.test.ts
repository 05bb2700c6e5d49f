import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * Endings are built in core (core/run/endings.ts, core/run/skill-result.ts, core/policy/endings.ts), never in workflow
 * code. An ending literal: an object literal (not an event: it has no `type`) with a `status` that is a terminal status
 * or a `reason`, whose value is a string literal, or a conditional or fallback with one.
 */
const workflowsDir = path.join(__dirname, '..', 'workflows');
const terminal = new Set(['completed', 'failed', 'cancelled']);

function literalsOf(value: ts.Expression): string[] {
  if (ts.isStringLiteral(value) || ts.isNoSubstitutionTemplateLiteral(value)) return [value.text];
  if (ts.isParenthesizedExpression(value)) return literalsOf(value.expression);
  if (ts.isConditionalExpression(value)) return [...literalsOf(value.whenTrue), ...literalsOf(value.whenFalse)];
  if (ts.isBinaryExpression(value)) return [...literalsOf(value.left), ...literalsOf(value.right)];
  return [];
}

function propertyValue(literal: ts.ObjectLiteralExpression, name: string): ts.Expression | undefined {
  for (const property of literal.properties) {
    if (ts.isPropertyAssignment(property) && property.name.getText() === name) return property.initializer;
    if (ts.isShorthandPropertyAssignment(property) && property.name.text === name) return property.name;
  }
  return undefined;
}

export function endingLiterals(source: string, fileName = 'file.ts'): number {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true);
  let count = 0;
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node) && !propertyValue(node, 'type')) {
      const status = propertyValue(node, 'status');
      const reason = propertyValue(node, 'reason');
      const terminalStatus = status !== undefined && literalsOf(status).some((value) => terminal.has(value));
      if (terminalStatus || (reason !== undefined && literalsOf(reason).length > 0)) count++;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return count;
}

describe('ending literals in workflows/', () => {
  it('are counted: statuses, reasons, and their conditionals; events and running records are not endings', () => {
    expect(endingLiterals(`f({ status: 'failed', reason, error })`)).toBe(1);
    expect(endingLiterals(`f({ status: 'completed', output, ...(cut ? { reason: cut } : {}) })`)).toBe(1);
    expect(endingLiterals(`f({ status: x === 'completed' ? 'failed' : x, reason: r ?? code })`)).toBe(1);
    expect(endingLiterals(`f({ reason: 'expired' })`)).toBe(1);
    expect(endingLiterals(`f({ type: 'cancelled', reason: 'cancelled' }, { type: 'status', status: 'failed' })`)).toBe(
      0,
    );
    expect(endingLiterals(`f({ status: 'running' }, { status: result.status, reason: result.reason })`)).toBe(0);
  });

  it('none is built in workflow code', () => {
    const counts = Object.fromEntries(
      fs
        .readdirSync(workflowsDir)
        .filter((name) => name.endsWith('.ts'))
        .map((name) => [name, endingLiterals(fs.readFileSync(path.join(workflowsDir, name), 'utf8'), name)])
        .filter(([, count]) => count !== 0),
    );
    expect(counts).toEqual({});
  });
});
