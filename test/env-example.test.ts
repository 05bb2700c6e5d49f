import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../lib/config';

const example = fs.readFileSync(path.resolve(__dirname, '..', '.env.example'), 'utf8');

/** Every variable loadConfig asks the environment for, recorded by an environment that has none. */
function variablesRead(): string[] {
  const names = new Set<string>();
  const recording = new Proxy({} as Record<string, string | undefined>, {
    get(_target, name) {
      if (typeof name === 'string') names.add(name);
      return undefined;
    },
  });
  loadConfig(recording);
  return [...names].sort();
}

/** `NAME=value` lines (a setting shown with its default) and `# NAME=value` lines (an example of an unset one). */
function listed(): Map<string, { value: string; commented: boolean }> {
  const found = new Map<string, { value: string; commented: boolean }>();
  for (const match of example.matchAll(/^(# )?([A-Z][A-Z0-9_]*)=(.*)$/gm)) {
    found.set(match[2], { value: match[3], commented: match[1] !== undefined });
  }
  return found;
}

describe('.env.example', () => {
  const read = variablesRead();

  it('reads a sensible number of variables (the recording works)', () => {
    expect(read).toEqual(expect.arrayContaining(['PORT', 'SKILLFLOW_AUTH', 'TEMPORAL_ADDRESS', 'SKILLFLOW_MODEL']));
  });

  it.each(read)('lists %s, which the configuration reads', (name) => {
    expect(listed().has(name)).toBe(true);
  });

  it('shows each set variable with its default value', () => {
    const defaults = { ...loadConfig({}), warnings: [] };
    const differing = [...listed()]
      .filter(([, line]) => !line.commented)
      .filter(
        ([name, line]) =>
          JSON.stringify({ ...loadConfig({ [name]: line.value }), warnings: [] }) !== JSON.stringify(defaults),
      )
      .map(([name, line]) => `${name}=${line.value}`);
    expect(differing).toEqual([]);
  });
});
