import fs from 'node:fs';
import path from 'node:path';
import { SkillValidationError } from '../../core/skills';
import { validateSkillLibrary } from '../../lib/skills';
import { fixturesDir, invalidFixtures, registryFor, scratchCopy } from './helpers';

/** Every validation rule has a fixture folder that breaks it and nothing else: [folder, file, field, message, fix]. */
const expected: [string, string, string, string, string][] = [
  ['misspelt-skill-md', 'skill.md', '-', 'the skill file must be spelled SKILL.md', 'rename skill.md to SKILL.md.'],
  [
    'bad-yaml',
    'SKILL.md',
    '-',
    'the front matter is not valid YAML: Map keys must be unique (line 3)',
    'fix the YAML syntax; quote values that contain ": " or start with special characters.',
  ],
  [
    'compatibility-too-long',
    'SKILL.md',
    'compatibility',
    'compatibility is 501 characters long; the limit is 500',
    'describe the environment the skill needs in at most 500 characters.',
  ],
  [
    'description-angle-brackets',
    'SKILL.md',
    'description',
    'description contains "<" or ">", which runtimes reject (it could smuggle markup into prompts)',
    'reword it without angle brackets (e.g. "less than", "leads to").',
  ],
  [
    'description-too-long',
    'SKILL.md',
    'description',
    'description is 1025 characters long; the limit is 1024',
    'shorten it; put details in the body of SKILL.md.',
  ],
  [
    'empty-body',
    'SKILL.md',
    'body',
    'the body is empty once HTML is removed, so there are no instructions to load',
    'write the instructions in markdown below the front matter.',
  ],
  [
    'empty-subskill',
    'subskills/ask.md',
    '-',
    'the subskill is empty once HTML is removed',
    'write its instructions in markdown, or delete the file.',
  ],
  [
    'js-frontmatter',
    'SKILL.md',
    '-',
    'front matter language "js" is refused: only YAML is read, and code is never evaluated',
    'make the first line exactly --- and write the front matter in YAML.',
  ],
  [
    'metadata-not-string',
    'SKILL.md',
    'metadata.version',
    'metadata.version is a number; the spec allows only string values, and strict runtimes drop the skill',
    'put the value in quotes so YAML keeps it as written: version: "1.0".',
  ],
  [
    'missing-description',
    'SKILL.md',
    'description',
    'the required field description is missing',
    'add "description: ..." saying what the skill does and when to use it.',
  ],
  [
    'missing-name',
    'SKILL.md',
    'name',
    'the required field name is missing',
    'add "name: missing-name" (the name must equal the folder name).',
  ],
  [
    'name-charset',
    'SKILL.md',
    'name',
    'name "Name_Charset" may contain only lowercase letters, digits and hyphens',
    'use "name-charset" and name the folder the same.',
  ],
  [
    'name-hyphens',
    'SKILL.md',
    'name',
    'name "name--hyphens" must not contain two hyphens in a row',
    'use "name-hyphens" and name the folder the same.',
  ],
  [
    'name-mismatch',
    'SKILL.md',
    'name',
    'name "other-name" does not match its folder "name-mismatch"',
    'rename the folder to "other-name" or set "name: name-mismatch".',
  ],
  [
    'name-too-long',
    'SKILL.md',
    'name',
    'name "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" is 65 characters long; the limit is 64',
    'use "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" and name the folder the same.',
  ],
  [
    'nested-skill-md',
    'references/SKILL.md',
    '-',
    'a nested SKILL.md would be registered as a top-level skill by runtimes that scan recursively',
    'rename it; subskills live in subskills/NAME.md.',
  ],
  [
    'no-frontmatter',
    'SKILL.md',
    '-',
    'the file does not start with front matter',
    'put a --- line first, then name: and description: lines, then a closing --- line.',
  ],
  [
    'sidecar-approve-defaults-without-default',
    'skillflow.yaml',
    'checkpoints.confirm.params.count.default',
    'on-timeout approve-defaults needs a default for every param, and count has none',
    'add a default to count, or pick another on-timeout policy.',
  ],
  [
    'sidecar-bad-default',
    'skillflow.yaml',
    'parameters.count.default',
    'default "ten" is a string, not an integer',
    'make the default a valid value of the field, or remove it.',
  ],
  [
    'sidecar-bad-ttl',
    'skillflow.yaml',
    'checkpoints.confirm.ttl',
    'ttl "30 minutes" is not a duration',
    'write a duration such as "90s", "30m", "2h" or "1h30m".',
  ],
  [
    'sidecar-bad-type',
    'skillflow.yaml',
    'parameters.topic.type',
    'type "str" is not supported',
    'use one of string, number, integer, boolean, array, object.',
  ],
  [
    'sidecar-deadline-jump-not-in-plan',
    'skillflow.yaml',
    'deadlines[0].jump-to',
    'jump-to "report" is not a step of the plan',
    "name one of the plan's steps: ask.",
  ],
  [
    'sidecar-deadline-param-not-number',
    'skillflow.yaml',
    'deadlines[0].from',
    'param setup.minutes is string, not a number',
    'declare it under checkpoints.setup.params with type integer (or number).',
  ],
  [
    'sidecar-misnamed',
    'skillflow.yml',
    '-',
    'the engine sidecar must be named skillflow.yaml',
    'rename it to skillflow.yaml.',
  ],
  [
    'sidecar-self-child',
    'skillflow.yaml',
    'children',
    'the skill lists itself as a child',
    'remove it; a skill cannot nest inside itself.',
  ],
  [
    'sidecar-step-limit-unknown-step',
    'skillflow.yaml',
    'steps.aks',
    '"aks" is not a subskill of this skill',
    'did you mean "ask"?',
  ],
  [
    'sidecar-unknown-key',
    'skillflow.yaml',
    'paramters',
    '"paramters" is not a known key',
    'did you mean "parameters"?',
  ],
  [
    'sidecar-yaml-js-tag',
    'skillflow.yaml',
    'line 2',
    'not valid YAML: Unresolved tag: tag:yaml.org,2002:js/function',
    'fix the YAML syntax; quote strings that contain ": " and keep one value per key.',
  ],
  [
    'subskill-bad-name',
    'subskills/Bad_Name.md',
    '-',
    'subskill name "Bad_Name" may contain only lowercase letters a-z, digits 0-9 and hyphens',
    'name subskill files with lowercase a-z, 0-9 and single hyphens, e.g. question-generation.md.',
  ],
  [
    'subskill-frontmatter',
    'subskills/ask.md',
    '-',
    'subskill files carry no front matter',
    'remove the --- block; describe the subskill in the body of SKILL.md.',
  ],
  [
    'subskill-not-markdown',
    'subskills/notes.txt',
    '-',
    'subskills/ holds only markdown subskill files (NAME.md)',
    'move it out of subskills/ (e.g. to references/) if it is a resource.',
  ],
  [
    'unclosed-frontmatter',
    'SKILL.md',
    '-',
    'the front matter is never closed',
    'end the front matter with a line holding only ---.',
  ],
  [
    'unknown-top-level-field',
    'SKILL.md',
    'plan',
    '"plan" is not a frontmatter field of the Agent Skills spec, so strict runtimes reject the skill',
    'move it to metadata.plan (a quoted string): under "metadata:", write plan: "step-one".',
  ],
  [
    'missing-child',
    'skillflow.yaml',
    'children',
    'child skill "no-such-skill" is not a valid skill of this library',
    'add a skill folder no-such-skill/, fix it, or remove the reference.',
  ],
  [
    'missing-route',
    'skillflow.yaml',
    'checkpoints.next.routes.no-such-skill',
    'route target "no-such-skill" is not a valid skill of this library',
    'add a skill folder no-such-skill/, fix it, or remove the reference.',
  ],
  [
    'cycle-a',
    'skillflow.yaml',
    'children',
    'child skills form a cycle: cycle-a → cycle-b → cycle-a',
    'remove one link of the cycle from the children of one of these skills.',
  ],
  [
    'cycle-b',
    'skillflow.yaml',
    'children',
    'child skills form a cycle: cycle-b → cycle-a → cycle-b',
    'remove one link of the cycle from the children of one of these skills.',
  ],
];

describe('validation rules, one bad skill each', () => {
  let problems: Awaited<ReturnType<typeof validateSkillLibrary>>['problems'];
  beforeAll(async () => {
    problems = (await validateSkillLibrary(invalidFixtures)).problems;
  });

  it('has a fixture for every rule and a rule for every fixture', () => {
    const folders = fs.readdirSync(invalidFixtures).sort();
    expect([...new Set(expected.map(([folder]) => folder))].sort()).toEqual(folders);
  });

  it.each(expected)('%s: %s %s', (folder, file, field, message, fix) => {
    const own = problems.filter((p) => p.skill === folder);
    expect(own).toEqual([{ severity: 'error', skill: folder, file: `${folder}/${file}`, field, message, fix }]);
  });

  it('never evaluates ---js front matter', () => {
    expect((globalThis as Record<string, unknown>).SKILLFLOW_PWNED).toBeUndefined();
  });
});

describe('the registry on a folder of broken skills', () => {
  const lazilyDetected = ['empty-body', 'empty-subskill', 'subskill-frontmatter'];
  const scratch = scratchCopy(invalidFixtures);
  afterAll(scratch.cleanup);

  it('reports and skips them without crashing; body problems surface only when the skill is loaded', async () => {
    const registry = registryFor(scratch.skillsDir, scratch.dataDir);
    const catalog = await registry.catalog();
    expect(catalog.skills.map((s) => s.name)).toEqual(lazilyDetected);
    const reported = new Set(catalog.problems.map((p) => p.skill));
    for (const folder of fs.readdirSync(scratch.skillsDir).filter((f) => !lazilyDetected.includes(f)))
      expect(reported).toContain(folder);
    for (const name of lazilyDetected) {
      const error = await registry.snapshot(name).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SkillValidationError);
      const row = expected.find(([folder]) => folder === name) as string[];
      expect((error as SkillValidationError).file).toBe(`${name}/${row[1]}`);
      expect((error as SkillValidationError).message).toBe(
        `${name}/${row[1]}: ${row[2] === '-' ? '' : `${row[2]}: `}${row[3]}. Fix: ${row[4]}`,
      );
    }
    expect(fs.existsSync(path.join(scratch.dataDir, 'skill-store'))).toBe(false);
  });
});

describe('engine data under metadata that skillflow cannot use: a warning, never an error', () => {
  /** [folder, field, message, fix]; the spec accepts every one of these skills, so each must load. */
  const warned: [string, string, string, string][] = [
    [
      'bad-category',
      'metadata.category',
      'category "Learning Stuff" is not a lowercase word, so skillflow ignores it',
      'use lowercase a-z, 0-9 and single hyphens, e.g. "learning" or "code".',
    ],
    [
      'bad-enabled',
      'metadata.enabled',
      'enabled is "yes", so skillflow keeps the skill enabled',
      'write "true" or "false" (quoted).',
    ],
    [
      'bad-tags',
      'metadata.tags',
      'tag "Exam Prep" is not a lowercase word, so skillflow ignores it',
      'separate tags with commas; each tag uses lowercase a-z, 0-9 and single hyphens, e.g. "exam, practice".',
    ],
    [
      'plan-missing-subskill',
      'metadata.plan',
      'step "grde" has no subskill file subskills/grde.md, so skillflow ignores the plan and enforces no order of steps',
      'did you mean "grade"? Otherwise create subskills/grde.md.',
    ],
    [
      'plan-syntax',
      'metadata.plan',
      'plan syntax: "(" is never closed at column 1, so skillflow ignores the plan and enforces no order of steps',
      'add the matching ")".',
    ],
  ];
  let report: Awaited<ReturnType<typeof validateSkillLibrary>>;
  beforeAll(async () => {
    report = await validateSkillLibrary(path.join(fixturesDir, 'engine-metadata'));
  });

  it.each(warned)('%s: %s', (folder, field, message, fix) => {
    expect(report.problems.filter((p) => p.skill === folder)).toEqual([
      { severity: 'warning', skill: folder, file: `${folder}/SKILL.md`, field, message, fix },
    ]);
    expect(report.skills.find((s) => s.folder === folder)?.manifest).toBeTruthy();
  });

  it('what cannot be used is ignored, the rest kept', () => {
    const manifest = (folder: string) => report.skills.find((s) => s.folder === folder)!.manifest!;
    expect(manifest('bad-category').category).toBeNull();
    expect(manifest('bad-tags').tags).toEqual(['quiz']);
    expect(manifest('bad-enabled').enabled).toBe(true);
    expect(manifest('plan-syntax').plan).toBeNull();
    expect(manifest('bad-version').version).toBe('v1');
    expect(report.problems.filter((p) => p.skill === 'bad-version')).toEqual([]);
  });
});

describe("the Agent Skills specification's own examples", () => {
  it('are valid without a single warning, and keep their metadata as written', async () => {
    const report = await validateSkillLibrary(path.join(fixturesDir, 'spec-examples'));
    expect(report.problems).toEqual([]);
    const pdf = report.skills.find((s) => s.folder === 'pdf-processing')!.manifest!;
    expect(pdf).toMatchObject({
      license: 'Apache-2.0',
      metadata: { author: 'example-org', version: '1.0' },
      version: '1.0',
    });
    const data = report.skills.find((s) => s.folder === 'data-analysis')!.manifest!;
    expect(data).toMatchObject({
      compatibility: 'Requires git, docker, jq, and access to the internet',
      allowedTools: 'Bash(git:*) Bash(jq:*) Read',
    });
    expect(report.skills.map((s) => s.folder).sort()).toEqual(['data-analysis', 'pdf-processing', 'skill-name']);
  });
});
