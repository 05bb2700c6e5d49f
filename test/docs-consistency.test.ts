import fs from 'node:fs';
import path from 'node:path';
import { livePatches } from '../core/patches';
import { baselinePatch, impliedByBaseline, separatePatches } from '../workflows/legacy/core/policy/state';
import { cancelledReasons, completedReasons, failedReasons } from '../core/run/reasons';

/** The documents say what the code does: every patch in force is in the operators' table, and no merge was left half done. */
const docsDir = path.join(__dirname, '..', 'docs');
const documents = [
  'README.md',
  ...fs
    .readdirSync(docsDir)
    .filter((name) => name.endsWith('.md'))
    .map((name) => path.join('docs', name)),
];
const read = (relative: string) => fs.readFileSync(path.join(__dirname, '..', relative), 'utf8');

describe('the documents', () => {
  it.each(documents)('%s holds no merge-conflict markers', (document) => {
    const markers = read(document)
      .split('\n')
      .map((line, i) => ({ line: i + 1, text: line }))
      .filter(({ text }) => /^(<{7}|={7}|>{7})( |$)/.test(text));
    expect(markers).toEqual([]);
  });

  it.each(documents)('%s speaks to its readers, not of the design documents (no "seed 002")', (document) => {
    const mentions = read(document)
      .split('\n')
      .map((line, i) => ({ line: i + 1, text: line }))
      .filter(({ text }) => /\bseeds? \d{3}\b/i.test(text));
    expect(mentions).toEqual([]);
  });

  /** The ids in the first column of the operators.md table whose header starts so. */
  function tableIds(headerStart: string): string[] {
    const lines = read('docs/operators.md').split('\n');
    const header = lines.findIndex((line) => line.startsWith(headerStart));
    expect(header).toBeGreaterThan(-1);
    const end = lines.findIndex((line, i) => i > header && !line.startsWith('|'));
    return lines
      .slice(header + 2, end)
      .map((line) => /^\| `([a-z0-9-]+)` \|/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
  }

  it("operators.md's table of live patches lists every patch of core/patches.ts, and no other", () => {
    const live = Object.values(livePatches as Record<string, { id: string }>).map((patch) => patch.id);
    expect(tableIds('| live patch id |').sort()).toEqual(live.sort());
  });

  it("operators.md's table of the legacy code's patches lists every patch a legacy run records, and no other", () => {
    const inForce = [baselinePatch, ...impliedByBaseline, ...Object.values(separatePatches)];
    expect(tableIds('| legacy patch id |').sort()).toEqual([...inForce].sort());
  });

  it("events.md's table of reasons lists every reason an ending may carry, with its status, and no other", () => {
    const lines = read('docs/events.md').split('\n');
    const header = lines.findIndex((line) => line.startsWith('| reason | status |'));
    expect(header).toBeGreaterThan(-1);
    const end = lines.findIndex((line, i) => i > header && !line.startsWith('|'));
    const listed = lines.slice(header + 2, end).flatMap((line) => {
      const [reasons, status] = line.split('|').slice(1, 3);
      return [...reasons.matchAll(/`([a-z_]+)`/g)].map((match) => `${status.trim()}: ${match[1]}`);
    });
    const union = [
      ...completedReasons.map((reason) => `completed: ${reason}`),
      ...failedReasons.map((reason) => `failed: ${reason}`),
      ...cancelledReasons.map((reason) => `cancelled: ${reason}`),
    ];
    expect([...listed].sort()).toEqual([...union].sort());
  });
});
