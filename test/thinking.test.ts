import { text, toolUse } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { answerNext, startTurn } from './support/turns';

describe('extended thinking', () => {
  const harness = useWorkerHarness('thinking');

  it('asks for thinking, and keeps each thinking block with its tool call across rounds and a checkpoint wait', async () => {
    const { env, fake, taskQueue } = harness;
    fake.enqueue(
      { content: [{ type: 'thinking', thinking: 'The user wants a check first.', signature: 'sig-one' }, toolUse('request_human_approval', { checkpoint: 'plan', summary: 'ok?', kind: 'approval' }, 'toolu_cp')] },
      { content: [{ type: 'thinking', thinking: 'Approved; answer now.', signature: 'sig-two' }, text('Done, as approved.')] },
    );
    const handle = await startTurn(env.client, taskQueue, 'think about it', { settings: { thinkingBudgetTokens: 2048, maxTokens: 4096 } });
    await answerNext(handle, { action: 'approve' });
    expect(await handle.result()).toMatchObject({ status: 'completed', output: 'Done, as approved.' });

    const [first, second] = fake.requests.map((request) => request.body);
    expect(first.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(first.max_tokens).toBe(4096);
    expect(second.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants a check first.', signature: 'sig-one' },
        { type: 'tool_use', id: 'toolu_cp', name: 'request_human_approval', input: { checkpoint: 'plan', summary: 'ok?', kind: 'approval' } },
      ],
    });
  });
});
