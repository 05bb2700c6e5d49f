import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { answerNext, startTurn } from './support/turns';

const skillsDir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-thinking-skills-'));
fs.mkdirSync(path.join(skillsDir, 'quick-lookup'));
fs.writeFileSync(
  path.join(skillsDir, 'quick-lookup', 'SKILL.md'),
  '---\nname: quick-lookup\ndescription: Answers simple lookups quickly, for tests.\nmetadata:\n  effort: low\n---\n\n# Quick lookup\n\nAnswer in one line.\n',
);

describe('thinking and effort', () => {
  const harness = useWorkerHarness('thinking', { skillsDir: () => skillsDir });

  it('asks the default model for adaptive thinking (its refused budget form never), and keeps each thinking block with its tool call across rounds and a checkpoint wait', async () => {
    const { env, fake, taskQueue } = harness;
    fake.enqueue(
      {
        content: [
          { type: 'thinking', thinking: 'The user wants a check first.', signature: 'sig-one' },
          toolUse('request_human_approval', { checkpoint: 'plan', summary: 'ok?', kind: 'approval' }, 'toolu_cp'),
        ],
      },
      {
        content: [
          { type: 'thinking', thinking: 'Approved; answer now.', signature: 'sig-two' },
          text('Done, as approved.'),
        ],
      },
    );
    // The settings of a session created with only SKILLFLOW_THINKING_BUDGET_TOKENS set.
    const handle = await startTurn(env.client, taskQueue, 'think about it', {
      settings: { model: 'claude-sonnet-5-5', thinkingBudgetTokens: 2048, maxTokens: 4096 },
    });
    await answerNext(handle, { action: 'approve' });
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Done, as approved.' });

    const [first, second] = fake.requests.map((request) => request.body);
    expect(first.thinking).toEqual({ type: 'adaptive' });
    expect(first.max_tokens).toBe(4096);
    expect(second.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants a check first.', signature: 'sig-one' },
        {
          type: 'tool_use',
          id: 'toolu_cp',
          name: 'request_human_approval',
          input: { checkpoint: 'plan', summary: 'ok?', kind: 'approval' },
        },
      ],
    });
  });

  it("sends the configured effort, and the active skill's metadata.effort while it is active", async () => {
    const { env, fake, taskQueue } = harness;
    const before = fake.requests.length;
    fake.enqueue({ content: [toolUse('load_skill', { name: 'quick-lookup' })] }, { content: [text('Paris.')] });
    const handle = await startTurn(env.client, taskQueue, 'capital of France?', {
      settings: { model: 'claude-opus-4-7', thinking: true, effort: 'high' },
    });
    // Its own deadline: a turn that went another way (a refused request, a leftover script) may wait at a checkpoint.
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the turn did not end within 20 s')), 20_000);
    });
    const result = await Promise.race([handle.result(), deadline]).finally(() => clearTimeout(timer));
    expect(result).toMatchObject({ status: 'completed', output: 'Paris.' });
    const [first, second] = fake.requests.slice(before).map((request) => request.body);
    expect(first).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } });
    expect(second).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } });
  });
});
