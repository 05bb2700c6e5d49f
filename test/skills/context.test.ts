import { basePrompt } from '../../core/prompts';
import { buildSystemPrompt, skillCatalogText, skillToolDefinitions, skillRules } from '../../core/skills';

const skills = [
  { name: 'exam-mode-tuner', description: 'Runs adaptive practice exams.\nUse for quizzes.', category: 'learning' },
  { name: 'code-review', description: 'Reviews code.', category: 'code' },
];

describe('system prompt assembly', () => {
  it('puts the base prompt first and the skill catalog in a block of its own', () => {
    const blocks = buildSystemPrompt({ basePrompt, skills });
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toEqual({ type: 'text', text: basePrompt });
    expect(blocks[1].text).toBe(
      [
        '# Skills',
        '',
        'Skills available to you (name: description):',
        '- exam-mode-tuner: Runs adaptive practice exams. Use for quizzes.',
        '- code-review: Reviews code.',
        '',
        'Rules for skills:',
        skillRules,
      ].join('\n'),
    );
  });

  it('states that subskill outputs and routing decisions are never invented', () => {
    expect(skillRules).toContain('Never invent what a subskill would produce');
    expect(skillRules).toContain('never invent a routing decision');
    expect(skillRules).toContain('request_human_approval');
  });

  it('carries names and descriptions only, never skill bodies', () => {
    const text = skillCatalogText([{ name: 'a', description: 'Does A.', body: 'SECRET BODY' } as never]) as string;
    expect(text).not.toContain('SECRET BODY');
  });

  it('omits the catalog block when there are no skills', () => {
    expect(buildSystemPrompt({ basePrompt: 'Base.', skills: [] })).toEqual([{ type: 'text', text: 'Base.' }]);
    expect(skillCatalogText([])).toBeNull();
  });
});

describe('skill tool definitions', () => {
  it('offers the four tools with strict input schemas and skill names as an enum', () => {
    const tools = skillToolDefinitions(skills);
    expect(tools.map((t) => t.name)).toEqual(['load_skill', 'load_subskill', 'read_file', 'list_skills']);
    expect(tools[0].input_schema).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The skill to load.', enum: ['exam-mode-tuner', 'code-review'] },
      },
      required: ['name'],
      additionalProperties: false,
    });
    expect(tools[1].input_schema.required).toEqual(['skill', 'subskill']);
    expect(tools[2].input_schema.required).toEqual(['path']);
    expect((tools[3].input_schema.properties as Record<string, { enum?: string[] }>).category.enum).toEqual([
      'code',
      'learning',
    ]);
  });

  it('leaves the enum out when there are no skills (an empty enum is not valid JSON Schema)', () => {
    const [loadSkill] = skillToolDefinitions([]);
    expect(loadSkill.input_schema.properties).toEqual({ name: { type: 'string', description: 'The skill to load.' } });
  });
});
