import * as workflows from '../workflows';
import { workflowTypes } from '../workflows/definitions';

describe('workflow type names', () => {
  it.each(Object.entries(workflowTypes))('%s is %s, a workflow the worker registers', (_, name) => {
    expect(workflows[name]).toBeInstanceOf(Function);
  });

  it('names each workflow once', () => {
    const names = Object.values(workflowTypes);
    expect(new Set(names).size).toBe(names.length);
  });
});
