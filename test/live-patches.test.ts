import fs from 'node:fs';
import path from 'node:path';
import { livePatches, maxLivePatches, type LivePatch } from '../core/patches';

/** The registry of live patch ids (core/patches.ts) holds every patch the current workflow code reads, and few. */
const workflowsDir = path.join(__dirname, '..', 'workflows');
/** Every file of the current workflow code: workflows/ and its folders but the frozen legacy/ one. */
function currentWorkflowFiles(dir = workflowsDir): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return full === path.join(workflowsDir, 'legacy') ? [] : currentWorkflowFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}
const registered: LivePatch[] = Object.values(livePatches);
const isDay = (value: string) => /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value));

describe('the live patch ids', () => {
  it(`are at most ${maxLivePatches}, each id once`, () => {
    expect(registered.length).toBeLessThanOrEqual(maxLivePatches);
    expect(new Set(registered.map((patch) => patch.id)).size).toBe(registered.length);
  });

  it('each has a kebab-case id, a change, and a removal date after the day it landed', () => {
    for (const patch of registered) {
      expect(patch.id).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(patch.change.length).toBeGreaterThan(0);
      expect({ id: patch.id, days: isDay(patch.since) && isDay(patch.removableFrom) }).toEqual({
        id: patch.id,
        days: true,
      });
      expect(patch.removableFrom > patch.since).toBe(true);
    }
  });

  it('are the only patches the current workflow code reads: every patched() call there names one of them', () => {
    const files = currentWorkflowFiles();
    expect(files.length).toBeGreaterThan(10);
    expect(files.some((file) => file.includes(`${path.sep}legacy${path.sep}`))).toBe(false);
    const calls = files.flatMap((file) =>
      [...fs.readFileSync(file, 'utf8').matchAll(/\b(patched|deprecatePatch)\(([^)]*)\)/g)].map((match) => ({
        file: path.relative(workflowsDir, file),
        argument: match[2].trim(),
      })),
    );
    const unregistered = calls.filter(({ argument }) => {
      const name = /^livePatches\.(\w+)\.id$/.exec(argument)?.[1];
      return !name || !(name in livePatches);
    });
    expect(unregistered).toEqual([]);
    expect(calls.length).toBeLessThanOrEqual(registered.length * 4);
  });
});
