import * as workflows from '../workflows';
import * as current from '../workflows/definitions';
import * as legacy from '../workflows/legacy/definitions';
import {
  isWorkflowOfKind,
  legacyWorkflowTypes,
  typeNamesOf,
  workflowTypeClause,
  workflowTypes,
  type WorkflowKind,
} from '../core/workflow-types';

const kinds = Object.keys(workflowTypes) as WorkflowKind[];

describe('workflow type names', () => {
  it.each([...Object.entries(workflowTypes), ...Object.entries(legacyWorkflowTypes)])(
    '%s is %s, a workflow the worker registers',
    (_, name) => {
      expect(workflows[name as keyof typeof workflows]).toBeInstanceOf(Function);
    },
  );

  it('registers the current side and the legacy side, and nothing else', () => {
    expect(Object.keys(workflows).sort()).toEqual(
      [...Object.values(workflowTypes), ...Object.values(legacyWorkflowTypes)].sort(),
    );
  });

  it('names each workflow once, on both sides together', () => {
    const names = [...Object.values(workflowTypes), ...Object.values(legacyWorkflowTypes)];
    expect(new Set(names).size).toBe(names.length);
  });

  it('the legacy code starts and continues under the legacy names', () => {
    expect(legacy.workflowTypes).toBe(legacyWorkflowTypes);
    expect(current.workflowTypes).toBe(workflowTypes);
  });

  it.each(kinds)('a %s of either side is of its kind, and of no other', (kind) => {
    expect(typeNamesOf(kind)).toEqual([workflowTypes[kind], legacyWorkflowTypes[kind]]);
    for (const other of kinds) {
      expect(isWorkflowOfKind(other, workflowTypes[kind])).toBe(other === kind);
      expect(isWorkflowOfKind(other, legacyWorkflowTypes[kind])).toBe(other === kind);
    }
  });

  it('one visibility clause matches both sides', () => {
    expect(workflowTypeClause('turn')).toBe("WorkflowType IN ('turn', 'turnWorkflow')");
    expect(workflowTypeClause('session')).toBe("WorkflowType IN ('session', 'sessionWorkflow')");
  });
});

describe('signals, queries and updates on both sides of the boundary', () => {
  const named = (module: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(module)
        .filter(([, value]) => typeof value === 'object' && value !== null && 'type' in value && 'name' in value)
        .map(([key, value]) => {
          const { type, name } = value as { type: string; name: string };
          return [key, `${type}:${name}`];
        }),
    );

  it('the legacy code defines every one the current code does, under the same name and kind', () => {
    const currentNames = named(current);
    expect(Object.keys(currentNames).length).toBeGreaterThan(5);
    expect(named(legacy)).toEqual(currentNames);
  });
});
