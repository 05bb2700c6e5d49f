import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { defaultTurnSettings } from '../core/settings';
import { startTurnUpdate, workflowTypes } from '../workflows/definitions';
import type { sessionWorkflow } from '../workflows/session';
import { text } from './support/fake-anthropic';
import { useWorkerHarness } from './support/harness';
import { resultOf } from './support/turns';

const givenSkill = 'simple-writing';

/**
 * A turn given a skill whose load fails with an error that is not a skill error (here the skill store cannot be
 * written: its data dir lies under a regular file, ENOTDIR). Before readTurnStart, loadSkillSnapshot was retried and
 * its failure became a load_skill error the model saw, and the turn went on; the one start activity must keep that.
 */
describe('a turn whose given skill cannot be loaded for an I/O error', () => {
  const blocker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-blocked-')), 'not-a-dir');
  fs.writeFileSync(blocker, 'a file where the skill store would be');
  const harness = useWorkerHarness('turn-start-errors', { deps: () => ({ dataDir: path.join(blocker, 'data') }) });

  it('goes on, the model told the skill could not be loaded', async () => {
    const sessionId = `tserr${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const session = await harness.env.client.workflow.start<typeof sessionWorkflow>(workflowTypes.session, {
      workflowId: `session-${sessionId}`,
      taskQueue: harness.taskQueue,
      args: [
        {
          sessionId,
          userId: 'tester',
          createdAt: new Date().toISOString(),
          settings: { ...defaultTurnSettings, modelRetryInitialMs: 100 },
        },
      ],
    });
    harness.fake.enqueue({ content: [text('I could not load that skill, but here is a haiku anyway.')] });
    const { turnId } = await session.executeUpdate(startTurnUpdate, {
      args: [{ message: 'Write me a haiku about autumn.', skill: givenSkill }],
    });
    const result = await resultOf(harness.env.client.workflow.getHandle(turnId));
    await session.terminate('turn-start-errors test done');
    expect(result).toMatchObject({
      status: 'completed',
      output: 'I could not load that skill, but here is a haiku anyway.',
    });
    expect(JSON.stringify(harness.fake.requests[0]?.body.messages)).toContain(
      `The skill ${givenSkill} could not be loaded`,
    );
  }, 60_000);
});
