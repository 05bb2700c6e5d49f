import fs from 'node:fs';
import path from 'node:path';
import { validateSkillLibrary } from '../../lib/skills';
import { scratchCopy } from './helpers';

describe('warnings: reported, but the skill stays valid', () => {
  const scratch = scratchCopy();
  afterAll(scratch.cleanup);

  it('flags near-miss metadata keys, sidecar keys in metadata, engine tools in tools and long bodies', async () => {
    const folder = path.join(scratch.skillsDir, 'noisy');
    fs.mkdirSync(folder);
    const body = Array.from({ length: 520 }, (_, i) => `Line ${i + 1}.`).join('\n');
    fs.writeFileSync(
      path.join(folder, 'SKILL.md'),
      `---\nname: noisy\ndescription: Draws every warning.\nmetadata:\n  catgory: learning\n  parameters: "topic"\n  author: someone\n---\n\n${body}\n`,
    );
    fs.writeFileSync(path.join(folder, 'skillflow.yaml'), 'tools: [load_skill, web_search]\n');
    const report = await validateSkillLibrary(scratch.skillsDir);
    expect(report.skills.find((s) => s.folder === 'noisy')?.manifest?.tools).toEqual(['load_skill', 'web_search']);
    expect(report.problems.map((p) => [p.severity, p.file, p.field, p.message, p.fix])).toEqual([
      [
        'warning',
        'noisy/SKILL.md',
        'metadata.catgory',
        'metadata.catgory is not an engine key, so skillflow ignores it',
        'did you mean metadata.category?',
      ],
      [
        'warning',
        'noisy/SKILL.md',
        'metadata.parameters',
        'skillflow reads parameters from skillflow.yaml, not from metadata',
        'move it to skillflow.yaml (see docs/skills.md).',
      ],
      [
        'warning',
        'noisy/skillflow.yaml',
        'tools',
        'load_skill is an engine tool, offered in every turn anyway',
        'remove load_skill from tools.',
      ],
      [
        'warning',
        'noisy/SKILL.md',
        'body',
        'the body has more than 500 lines',
        'move phases into subskills and details into resource files.',
      ],
    ]);
  });
});
