import type { Worker } from '@temporalio/worker';
import { sessionWorkflowId } from '../core/turn';
import { legacyWorkflowTypes, moveToCurrentSignal, sessionStateQuery, workflowTypes } from '../workflows/definitions';
import { eventually } from './support/api';
import { text } from './support/fake-anthropic';
import { useHandoverStack } from './support/handover';

/**
 * A session of the code before the version boundary crosses to the current code: a worker on the 8d7c85e bundle runs
 * a session and its first turn; after the deploy the session (on workflows/legacy/) still starts legacy turns, and an
 * operator's moveToCurrent makes it continue as new as a `session`, whose next turn is a `turn`.
 */
describe('a legacy session crossing the version boundary', () => {
  const stack = useHandoverStack('crossing');
  let oldWorker: Worker;
  beforeAll(async () => {
    oldWorker = await stack.startOldWorker('8d7c85e');
  });

  it('starts legacy turns until it is moved, then continues as new as a session and starts current turns', async () => {
    const { env, fake, api } = stack;
    const typeOf = async (workflowId: string) => (await env.client.workflow.getHandle(workflowId).describe()).type;
    fake.enqueue({ content: [text('First answer.')] });
    const sessionId = await api.createSession();
    const first = (await api.sendMessage(sessionId, { message: 'One?' })).body.id;
    expect(await api.finished(first)).toMatchObject({ status: 'completed' });
    expect(await typeOf(first)).toBe(legacyWorkflowTypes.turn);

    await stack.deploy(oldWorker);
    fake.enqueue({ content: [text('Second answer.')] });
    const second = (await api.sendMessage(sessionId, { message: 'Two?' })).body.id;
    expect(await api.finished(second)).toMatchObject({ status: 'completed' });
    expect(await typeOf(second)).toBe(legacyWorkflowTypes.turn);

    const session = env.client.workflow.getHandle(sessionWorkflowId(sessionId));
    const legacyRun = (await session.describe()).runId;
    expect(await typeOf(session.workflowId)).toBe(legacyWorkflowTypes.session);
    await session.signal(moveToCurrentSignal, { by: 'tester' });
    await eventually(
      () => typeOf(session.workflowId),
      (type) => type === workflowTypes.session,
      20_000,
    );
    expect((await session.describe()).runId).not.toBe(legacyRun);
    expect(await session.query(sessionStateQuery)).toMatchObject({ turnCount: 2, closed: false });

    fake.enqueue({ content: [text('Third answer.')] });
    const third = (await api.sendMessage(sessionId, { message: 'Three?' })).body.id;
    expect(await api.finished(third)).toMatchObject({ status: 'completed', output: 'Third answer.' });
    expect(await typeOf(third)).toBe(workflowTypes.turn);
    // The current turn got the session's earlier exchanges, across the crossing.
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain('Second answer.');
  });
});
