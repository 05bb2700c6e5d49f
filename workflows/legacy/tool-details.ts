import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { undetailedToolsInScope } from './core/policy';
import { specOf } from './core/tools';
import type { TurnRun } from './turn-run';

const { readToolDetails } = proxyActivities<Activities>({ startToCloseTimeout: '30s', retry: { maximumAttempts: 3 } });

/**
 * Reads the detail (description and input schema) of the registered tools granted now that the run holds the header of
 * only, in one activity, and gives them to the policy: before a round offers the model its tools, and before a tool
 * call is decided (a skill loaded earlier in the same response may have granted it). A run that read its catalog whole
 * holds every detail and issues nothing here.
 */
export async function readGrantedDetails(run: TurnRun): Promise<void> {
  const wanted = undetailedToolsInScope(run.policy);
  if (wanted.length === 0) return;
  const details = await readToolDetails.executeWithOptions(
    { summary: `tool details: ${wanted.map((header) => header.name).join(', ')}` },
    [{ tools: wanted.map(({ name, detail }) => ({ name, detail })) }],
  );
  run.decide({ type: 'tools.detailed', specs: wanted.map((header, i) => specOf(header, details[i])) });
}
