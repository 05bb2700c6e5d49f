import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { writeCurrentFigures } from '../bench/report';

describe("npm run bench's figures in docs/benchmarks.md", () => {
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bench-report-')), 'benchmarks.md');
  afterAll(() => fs.rmSync(path.dirname(file), { recursive: true, force: true }));

  it('replace the current figures and keep the method above them', () => {
    fs.writeFileSync(
      file,
      '# Benchmarks\n\nHow it works.\n\n## Current figures\n\n### Run of yesterday\n\nold table\n',
    );
    writeCurrentFigures('### Run of today\n\nnew table\n', file);
    expect(fs.readFileSync(file, 'utf8')).toBe(
      '# Benchmarks\n\nHow it works.\n\n## Current figures\n\n### Run of today\n\nnew table\n',
    );
    writeCurrentFigures('### Run of tomorrow\n', file);
    expect(fs.readFileSync(file, 'utf8')).toBe(
      '# Benchmarks\n\nHow it works.\n\n## Current figures\n\n### Run of tomorrow\n',
    );
  });

  it('the page has its current figures last, so a run replaces only them', () => {
    const page = fs.readFileSync(path.join(__dirname, '..', 'docs', 'benchmarks.md'), 'utf8');
    const headings = page.split('\n').filter((line) => /^## /.test(line));
    expect(headings.at(-1)).toBe('## Current figures');
    expect(page).toMatch(/## Current figures\n\n### Run of \d{4}-\d{2}-\d{2}T/);
    expect(page).toMatch(/Commit [0-9a-f]{7}/);
  });
});
