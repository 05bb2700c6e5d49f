import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { sessionWorkflowId } from '../core/turn';
import { authHeaders, buildTestApp, eventually } from './support/api';
import { text } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { ApiDriver } from './support/scenario';

/**
 * Issue 13.6: a session's state stays bounded however long it lives. `npm run test:long-session` runs 2,000 turns
 * (SKILLFLOW_LONG_SESSION_TURNS); the normal suite runs 40 (about a minute here).
 */
const turns = Number(process.env.SKILLFLOW_LONG_SESSION_TURNS ?? 40);
const messageChars = 100_000;
const mib = 1024 * 1024;

/** The input each run of the session started with (the first run's, then every continue-as-new's), newest first. */
async function runInputs(client: Client, workflowId: string): Promise<Array<{ runId: string; bytes: number }>> {
  const namespace = client.options.namespace;
  const inputs: Array<{ runId: string; bytes: number }> = [];
  let runId = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    // The first event only: a run's whole history holds every message of its turns.
    const page = await client.workflowService.getWorkflowExecutionHistory({
      namespace,
      execution: { workflowId, runId },
      maximumPageSize: 1,
    });
    const started = page.history!.events![0]!.workflowExecutionStartedEventAttributes!;
    inputs.push({
      runId,
      bytes: started.input!.payloads!.reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0),
    });
    runId = started.continuedExecutionRunId ?? '';
  }
  return inputs;
}

describe(`a session of ${turns} turns of ${messageChars.toLocaleString('en')}-character messages`, () => {
  const harness = useWorkerHarness('long-session');
  let app: FastifyInstance;
  let api: ApiDriver;
  beforeAll(async () => {
    ({ app } = await buildTestApp(harness.env.client, harness.taskQueue, { SKILLFLOW_USER_DAILY_TOKENS: '0' }));
    api = new ApiDriver(app);
  });
  harness.closeFirst(async () => app?.close());

  it(
    "keeps every continue-as-new input within 1 MiB, a new turn's history within its byte window, and every turn readable",
    async () => {
      const { fake, env } = harness;
      let largestRequest = 0;
      fake.respond((body) => {
        largestRequest = Math.max(largestRequest, Buffer.byteLength(JSON.stringify(body.messages)));
        const last = JSON.stringify(body.messages.at(-1));
        return { content: [text(`answer ${/"(\d+):/.exec(last)?.[1] ?? '?'}`)] };
      });
      const sessionId = await api.createSession();
      const ids: string[] = [];
      for (let n = 1; n <= turns; n++) {
        const message = `${n}:`.padEnd(messageChars, 'm');
        const response = await app.inject({
          method: 'POST',
          url: `/v1/sessions/${sessionId}/turns?wait=true`,
          headers: authHeaders(),
          payload: { message },
        });
        const turn = response.json();
        if (response.statusCode === 202) ids.push((await api.finished(turn.id)).id);
        else {
          expect({ code: response.statusCode, status: turn.status, output: turn.output }).toEqual({
            code: 200,
            status: 'completed',
            output: `answer ${n}`,
          });
          ids.push(turn.id);
        }
        fake.requests.length = 0;
      }

      // What a turn sent the model: its message and at most 256 KiB of earlier exchanges (two of these), never more.
      expect(largestRequest).toBeLessThanOrEqual(messageChars + 256 * 1024 + 4 * 1024);

      const workflowId = sessionWorkflowId(sessionId);
      const inputs = await runInputs(env.client, workflowId);
      expect(inputs.length).toBeGreaterThan(1);
      const largest = Math.max(...inputs.map((input) => input.bytes));
      console.log(
        `${turns} turns: ${inputs.length} runs of the session; largest continue-as-new input ${largest} bytes`,
      );
      expect(largest).toBeLessThanOrEqual(mib);

      // Every turn reads, the old ones from their own workflows.
      for (const [index, id] of ids.entries()) {
        const view = await api.turn(id);
        expect({ code: view.code, status: view.body.status, output: view.body.output }).toEqual({
          code: 200,
          status: 'completed',
          output: `answer ${index + 1}`,
        });
      }
      const session = (
        await app.inject({ method: 'GET', url: `/v1/sessions/${sessionId}`, headers: authHeaders() })
      ).json();
      expect(session.turnCount).toBe(turns);
      expect(session.turns.at(-1)).toMatchObject({ id: ids.at(-1), number: turns, output: `answer ${turns}` });
      expect(session.turns.length).toBeLessThan(turns);
      // The session's turn list has every turn (visibility, which lags a moment behind).
      const listed = await eventually(
        async () => {
          const found: string[] = [];
          let cursor: string | null = null;
          do {
            const page: { turns: Array<{ id: string }>; nextCursor: string | null } = (
              await app.inject({
                method: 'GET',
                url: `/v1/turns?session=${sessionId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
                headers: authHeaders(),
              })
            ).json();
            found.push(...page.turns.map((turn) => turn.id));
            cursor = page.nextCursor;
          } while (cursor);
          return found;
        },
        (found) => found.length === turns,
        60_000,
      );
      expect(new Set(listed)).toEqual(new Set(ids));
    },
    turns * 2_000 + 120_000,
  );
});
