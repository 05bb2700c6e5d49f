import { continueGuidance, emptyRecoveryAnswer, emptyResponseGuidance, roundBudgetGuidance } from '../core/guidance';
import { text, toolUse, type FakeAnthropic } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import type { TemporalTestEnv } from './support/temporal';
import { runTurn, startTurn } from './support/turns';

const lastUserText = (body: { messages: unknown[] }): string => {
  const last = body.messages[body.messages.length - 1] as {
    role: string;
    content: string | Array<{ type: string; text?: string }>;
  };
  expect(last.role).toBe('user');
  return typeof last.content === 'string'
    ? last.content
    : last.content
        .filter((b) => b.type === 'text')
        .map((b) => b.text)
        .join('\n');
};

describe('the agent loop on a real Temporal server', () => {
  const harness = useWorkerHarness('loop');
  let env: TemporalTestEnv;
  let fake: FakeAnthropic;
  let taskQueue: string;

  beforeAll(() => ({ env, fake, taskQueue } = harness));

  describe('stop reasons', () => {
    it('end_turn: the text is the output, with exactly one terminal event', async () => {
      fake.enqueue({ content: [text('All done.')], stopReason: 'end_turn' });
      const { result, events } = await runTurn(env.client, taskQueue, 'hi');
      expect(result).toMatchObject({ status: 'completed', output: 'All done.' });
      expect(result.reason).toBeUndefined();
      expect(events.map((e) => e.type)).toEqual(['status', 'message', 'status', 'done']);
      expect(events.map((e) => e.offset)).toEqual([1, 2, 3, 4]);
      expect(events.filter((e) => ['done', 'error', 'cancelled'].includes(e.type))).toHaveLength(1);
    });

    it('stop_sequence ends the turn with the text so far', async () => {
      fake.enqueue({ content: [text('Up to the stop')], stopReason: 'stop_sequence' });
      const { result } = await runTurn(env.client, taskQueue, 'hi');
      expect(result).toMatchObject({ status: 'completed', output: 'Up to the stop' });
    });

    it('max_tokens: the answer is continued and joined', async () => {
      fake.enqueue({ content: [text('Part one, ')], stopReason: 'max_tokens' }, { content: [text('part two.')] });
      const { result } = await runTurn(env.client, taskQueue, 'long please');
      expect(result).toMatchObject({ status: 'completed', output: 'Part one, part two.' });
      const second = fake.requests[1].body;
      expect(second.messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Part one, ' }] });
      expect(lastUserText(second)).toBe(continueGuidance);
    });

    it('max_tokens: continuations are bounded', async () => {
      fake.enqueue(
        { content: [text('a')], stopReason: 'max_tokens' },
        { content: [text('b')], stopReason: 'max_tokens' },
      );
      const { result } = await runTurn(env.client, taskQueue, 'long', { settings: { maxContinuations: 1 } });
      expect(result).toMatchObject({ status: 'completed', output: 'ab', reason: 'max_tokens' });
      expect(fake.requests).toHaveLength(2);
    });

    it('pause_turn: the content is sent back and the loop goes on', async () => {
      fake.enqueue({ content: [text('Working...')], stopReason: 'pause_turn' }, { content: [text('Finished.')] });
      const { result } = await runTurn(env.client, taskQueue, 'go');
      expect(result).toMatchObject({ status: 'completed', output: 'Finished.' });
      const messages = fake.requests[1].body.messages as Array<{ role: string }>;
      expect(messages[messages.length - 1]).toEqual({
        role: 'assistant',
        content: [{ type: 'text', text: 'Working...', cache_control: { type: 'ephemeral' } }],
      });
    });

    it('refusal: failed with a clear reason and message', async () => {
      fake.enqueue({ content: [], stopReason: 'refusal' });
      const { result, events } = await runTurn(env.client, taskQueue, 'something bad');
      expect(result).toMatchObject({
        status: 'failed',
        reason: 'refusal',
        error: { code: 'refusal', message: 'The model declined to continue with this request.' },
      });
      expect(events.at(-1)).toMatchObject({ type: 'error', code: 'refusal' });
    });

    it('model_context_window_exceeded: failed with a clear reason', async () => {
      fake.enqueue({ content: [text('partial')], stopReason: 'model_context_window_exceeded' });
      const { result } = await runTurn(env.client, taskQueue, 'huge');
      expect(result).toMatchObject({
        status: 'failed',
        reason: 'context_window_exceeded',
        error: { code: 'context_window_exceeded' },
      });
    });
  });

  describe('tools', () => {
    it('answers several calls of one response in order; an unknown tool is an error result the model sees', async () => {
      fake.enqueue(
        {
          content: [
            text('Let me try.'),
            toolUse('no_such_tool', { a: 1 }, 'toolu_A'),
            toolUse('also_missing', {}, 'toolu_B'),
          ],
        },
        { content: [text('Those tools do not exist.')] },
      );
      const { result, events } = await runTurn(env.client, taskQueue, 'use tools');
      expect(result).toMatchObject({ status: 'completed', output: 'Those tools do not exist.' });
      const results = (fake.requests[1].body.messages.at(-1) as { content: Array<Record<string, unknown>> }).content;
      expect(results.map((r) => [r.type, r.tool_use_id, r.is_error])).toEqual([
        ['tool_result', 'toolu_A', true],
        ['tool_result', 'toolu_B', true],
      ]);
      expect(results[0].content).toMatch(/^There is no tool named "no_such_tool"/);
      expect(
        events.filter((e) => e.type.startsWith('tool.')).map((e) => [e.type, (e as { callId: string }).callId]),
      ).toEqual([
        ['tool.start', 'toolu_A'],
        ['tool.end', 'toolu_A'],
        ['tool.start', 'toolu_B'],
        ['tool.end', 'toolu_B'],
      ]);
      expect(events.find((e) => e.type === 'tool.end')).toMatchObject({ isError: true, name: 'no_such_tool' });
    });
  });

  describe('model errors', () => {
    it('429 is retried, honouring retry-after, and the turn completes', async () => {
      fake.enqueue(
        { error: { status: 429, type: 'rate_limit_error', message: 'slow down', headers: { 'retry-after': '1' } } },
        { content: [text('ok')] },
      );
      const started = Date.now();
      const { result } = await runTurn(env.client, taskQueue, 'hi');
      expect(result).toMatchObject({ status: 'completed', output: 'ok' });
      expect(fake.requests).toHaveLength(2);
      expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    });

    it.each([
      [529, 'overloaded_error'],
      [500, 'api_error'],
    ])('%i is retried up to the attempt limit, then the turn fails', async (status, type) => {
      for (let i = 0; i < 3; i++) fake.enqueue({ error: { status, type, message: `boom ${i}` } });
      const { result } = await runTurn(env.client, taskQueue, 'hi');
      expect(fake.requests).toHaveLength(3);
      expect(result).toMatchObject({ status: 'failed', reason: 'model_error', error: { code: 'ModelTransient' } });
      expect(result.error?.message).toContain('boom 2');
    });

    it.each([
      [400, 'invalid_request_error', 'ModelInvalidRequest'],
      [401, 'authentication_error', 'ModelAuthentication'],
      [403, 'permission_error', 'ModelAuthentication'],
      [404, 'not_found_error', 'ModelNotFound'],
      [413, 'request_too_large', 'ModelInvalidRequest'],
    ])('%i is not retried: one attempt, the API message on the turn', async (status, type, code) => {
      fake.enqueue({ error: { status, type, message: `the API says ${status}` } });
      const { result } = await runTurn(env.client, taskQueue, 'hi');
      expect(fake.requests).toHaveLength(1);
      expect(result).toMatchObject({ status: 'failed', error: { code } });
      expect(result.error?.message).toContain(`the API says ${status}`);
    });

    it('an error inside the stream after a 200 is retried', async () => {
      fake.enqueue(
        { streamError: { type: 'overloaded_error', message: 'Overloaded' }, afterText: 'Hal' },
        { content: [text('Whole answer.')] },
      );
      const { result } = await runTurn(env.client, taskQueue, 'hi');
      expect(result).toMatchObject({ status: 'completed', output: 'Whole answer.' });
      expect(fake.requests).toHaveLength(2);
    });
  });

  describe('empty responses', () => {
    it('are retried with guidance', async () => {
      fake.enqueue({ content: [] }, { content: [text('   ')] }, { content: [text('Now I answer.')] });
      const { result } = await runTurn(env.client, taskQueue, 'hi', { settings: { maxEmptyRetries: 2 } });
      expect(result).toMatchObject({ status: 'completed', output: 'Now I answer.' });
      expect(fake.requests).toHaveLength(3);
      expect(lastUserText(fake.requests[1].body)).toBe(`hi\n${emptyResponseGuidance}`);
      expect(lastUserText(fake.requests[2].body)).toBe(`hi\n${emptyResponseGuidance}\n${emptyResponseGuidance}`);
    });

    it('end with a controlled recovery answer past the limit', async () => {
      fake.enqueue({ content: [] }, { content: [] });
      const { result } = await runTurn(env.client, taskQueue, 'hi', { settings: { maxEmptyRetries: 1 } });
      expect(result).toMatchObject({ status: 'completed', reason: 'empty_response', output: emptyRecoveryAnswer });
      expect(fake.requests).toHaveLength(2);
    });
  });

  describe('round budget', () => {
    it('cuts a runaway loop: one last call without tools gives the answer, and the turn says it was cut', async () => {
      fake.respond((body) => {
        if ((body.tool_choice as { type?: string } | undefined)?.type === 'none')
          return { content: [text('Here is what I have.')] };
        return { content: [toolUse('spin', {})] };
      });
      const { result } = await runTurn(env.client, taskQueue, 'loop forever', { settings: { maxRounds: 3 } });
      expect(result).toMatchObject({ status: 'completed', reason: 'max_rounds', output: 'Here is what I have.' });
      expect(fake.requests).toHaveLength(4);
      const last = fake.requests[3].body;
      expect(last.tool_choice).toEqual({ type: 'none' });
      expect(lastUserText(last)).toBe(roundBudgetGuidance);
    });
  });

  describe('cancellation', () => {
    it('cancels an in-flight model call and ends cancelled', async () => {
      fake.enqueue({ content: [text('a slow answer that will never finish '.repeat(20))], delayMs: 500 });
      const handle = await startTurn(env.client, taskQueue, 'slow');
      while (fake.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await handle.cancel();
      const result = await handle.result();
      expect(result).toMatchObject({ status: 'cancelled', reason: 'cancelled' });
      await expect(fake.requests[0].finished).resolves.toBe('aborted');
    });
  });
});
