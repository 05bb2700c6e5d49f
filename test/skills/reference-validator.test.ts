import fs from 'node:fs';
import path from 'node:path';
import { validateSkillLibrary } from '../../lib/skills';
import { registryFor, scratchCopy } from './helpers';

/**
 * Skills as the reference validator (skills-ref) reads them: what it accepts loads (Unicode names after NFKC, a YAML
 * list for allowed-tools, any SKILL.md size); fixes quote what the author wrote; reserved words draw a warning.
 * Each case is one skill folder alone in a library: [case, folder, SKILL.md text, expected problems, expected manifest].
 */
const skill = (frontmatter: string, body = '# Instructions\n\nDo the thing.\n') =>
  `---\n${frontmatter}\n---\n\n${body}`;
const described = 'description: A test skill.';
const nfd = 'cafe\u0301';

type Problem = [severity: string, field: string, message: string, fix: string];
const cases: Array<[string, string, string, Problem[], Record<string, unknown> | null]> = [
  ['a Unicode name', 'café', skill(`name: café\n${described}`), [], { name: 'café' }],
  ['a folder in NFD and a name in NFC: one name', nfd, skill(`name: café\n${described}`), [], { name: 'café' }],
  ['a name in CJK letters', '翻訳', skill(`name: 翻訳\n${described}`), [], { name: '翻訳' }],
  [
    'an uppercase Unicode name, fixed to lowercase',
    'Café',
    skill(`name: Café\n${described}`),
    [
      [
        'error',
        'name',
        'name "Café" may contain only lowercase letters, digits and hyphens',
        'use "café" and name the folder the same.',
      ],
    ],
    null,
  ],
  [
    'a name with spaces, fixed with hyphens',
    'my skill',
    skill(`name: My Skill\n${described}`),
    [
      [
        'error',
        'name',
        'name "My Skill" may contain only lowercase letters, digits and hyphens',
        'use "my-skill" and name the folder the same.',
      ],
    ],
    null,
  ],
  [
    'allowed-tools as a YAML list',
    'listed',
    skill(`name: listed\n${described}\nallowed-tools:\n  - calculator\n  - Read`),
    [],
    { allowedTools: 'calculator Read' },
  ],
  [
    'allowed-tools listing a map',
    'listed-map',
    skill(`name: listed-map\n${described}\nallowed-tools:\n  - {a: b}`),
    [
      [
        'error',
        'allowed-tools',
        'allowed-tools lists something other than tool names',
        'list tool names separated by spaces, as one string (or as a YAML list of names).',
      ],
    ],
    null,
  ],
  [
    'metadata version: 1.0, fixed as written',
    'versioned',
    skill(`name: versioned\n${described}\nmetadata:\n  version: 1.0`),
    [
      [
        'error',
        'metadata.version',
        'metadata.version is a number; the spec allows only string values, and strict runtimes drop the skill',
        'put the value in quotes so YAML keeps it as written: version: "1.0".',
      ],
    ],
    null,
  ],
  [
    'metadata version: 1.10 keeps its zero',
    'versioned-ten',
    skill(`name: versioned-ten\n${described}\nmetadata:\n  version: 1.10`),
    [
      [
        'error',
        'metadata.version',
        'metadata.version is a number; the spec allows only string values, and strict runtimes drop the skill',
        'put the value in quotes so YAML keeps it as written: version: "1.10".',
      ],
    ],
    null,
  ],
  [
    'a top-level version: 1.0',
    'top-version',
    skill(`name: top-version\n${described}\nversion: 1.0`),
    [
      [
        'error',
        'version',
        '"version" is not a frontmatter field of the Agent Skills spec, so strict runtimes reject the skill',
        'move it to metadata.version (a quoted string): under "metadata:", write version: "1.0".',
      ],
    ],
    null,
  ],
  [
    'a reserved word in the name',
    'claude-helper',
    skill(`name: claude-helper\n${described}`),
    [
      [
        'warning',
        'name',
        'name "claude-helper" holds "claude", a word Anthropic reserves: claude.ai and the Skills API refuse the skill',
        'rename it (and its folder) without "anthropic" or "claude" to share it there.',
      ],
    ],
    { name: 'claude-helper' },
  ],
  [
    "a 72 KiB SKILL.md (Anthropic's claude-api skill is one)",
    'large',
    skill(`name: large\n${described}`, `# Large\n\n${'Reference text. '.repeat(72 * 64)}\n`),
    [
      [
        'warning',
        '-',
        "the file is 72.1 KiB, over the advised 64 KiB: every byte of it reaches the model's context",
        'move details into subskills or resource files, which are read only when needed.',
      ],
    ],
    { name: 'large' },
  ],
  [
    'metadata.effort',
    'effortful',
    skill(`name: effortful\n${described}\nmetadata:\n  effort: high`),
    [],
    { effort: 'high' },
  ],
  [
    'a metadata.effort that is no level',
    'effortless',
    skill(`name: effortless\n${described}\nmetadata:\n  effort: extreme`),
    [
      [
        'warning',
        'metadata.effort',
        'effort "extreme" is not an effort level, so the configured effort applies',
        'write one of low, medium, high, xhigh, max.',
      ],
    ],
    { name: 'effortless' },
  ],
];

describe('skills as the reference validator reads them', () => {
  const scratch = scratchCopy();
  afterAll(scratch.cleanup);
  let index = 0;

  it.each(cases)('%s', async (_case, folder, text, problems, manifest) => {
    const library = path.join(scratch.root, `library-${index++}`);
    fs.mkdirSync(path.join(library, folder), { recursive: true });
    fs.writeFileSync(path.join(library, folder, 'SKILL.md'), text);
    const report = await validateSkillLibrary(library);
    expect(report.problems.map((p) => [p.severity, p.field, p.message, p.fix])).toEqual(problems);
    const found = report.skills[0]?.manifest ?? null;
    if (manifest === null) expect(found).toBeNull();
    else expect(found).toMatchObject(manifest);
  });

  it('two folders equal after NFKC are one name: both refused, saying so', async () => {
    const library = path.join(scratch.root, 'library-twins');
    for (const folder of ['café', nfd]) {
      fs.mkdirSync(path.join(library, folder), { recursive: true });
      fs.writeFileSync(path.join(library, folder, 'SKILL.md'), skill(`name: café\n${described}`));
    }
    const report = await validateSkillLibrary(library);
    expect(report.problems.filter((p) => p.severity === 'error').map((p) => p.message)).toContain(
      'two skill folders are named "café" once Unicode-normalised (NFKC), which makes them one name',
    );
    expect(report.skills.every((entry) => entry.manifest === null)).toBe(true);
  });

  it('a skill whose folder is written in NFD loads by its NFC name, and by any spelling equal after NFKC', async () => {
    const library = path.join(scratch.root, 'library-load');
    fs.mkdirSync(path.join(library, nfd), { recursive: true });
    fs.writeFileSync(path.join(library, nfd, 'SKILL.md'), skill(`name: café\n${described}`));
    const registry = registryFor(library, path.join(scratch.root, 'data-load'));
    expect((await registry.catalog()).skills.map((s) => s.name)).toEqual(['café']);
    expect(await registry.snapshot('café')).toMatchObject({ name: 'café', body: '# Instructions\n\nDo the thing.' });
    expect(await registry.snapshot(nfd)).toMatchObject({ name: 'café' });
  });

  it('a SKILL.md past the snapshot and front matter caps together can never load: an error', async () => {
    const library = path.join(scratch.root, 'library-huge');
    fs.mkdirSync(path.join(library, 'huge'), { recursive: true });
    fs.writeFileSync(path.join(library, 'huge', 'SKILL.md'), skill(`name: huge\n${described}`, 'x'.repeat(400)));
    const catalog = await registryFor(library, path.join(scratch.root, 'data-huge'), {
      limits: { snapshotBytes: 100, frontmatterBytes: 200 },
    }).catalog();
    expect(catalog.problems.map((p) => [p.severity, p.message])).toEqual([
      ['error', 'the file is 447 bytes; the limit is 300 bytes'],
    ]);
  });
});
