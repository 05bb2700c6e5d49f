import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { repoRoot } from './cluster';

/**
 * The new worker build of the rolling deploy: a copy of the working tree whose workflow code differs from the running
 * build the way a real change must, behind a patch. Every model round of a turn on it calls `patched(newBuildPatch)`,
 * which records a marker: a turn that started on the old build replays its history (which has none) and records the
 * marker from its next round on; a turn whose history the new code could not replay would stop with a
 * nondeterminism error instead of completing.
 */
export const newBuildPatch = 'topology-new-build';

const loopFile = 'workflows/agent-loop.ts';
const roundAnchor = '        const response = await spend(round.held, () => callModel(run, options));';

export function prepareNewBuild(runDir: string): string {
  const root = path.join(runDir, 'new-build');
  const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '-z'], {
    cwd: repoRoot,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file && !file.startsWith('test/fixtures/') && fs.existsSync(path.join(repoRoot, file)));
  for (const file of files) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.copyFileSync(path.join(repoRoot, file), path.join(root, file));
  }
  fs.symlinkSync(path.join(repoRoot, 'node_modules'), path.join(root, 'node_modules'), 'dir');

  const loop = path.join(root, loopFile);
  const code = fs.readFileSync(loop, 'utf8');
  if (!code.includes(roundAnchor))
    throw new Error(`${loopFile} has no line "${roundAnchor.trim()}" to put the new build's patch before`);
  const indent = /^ */.exec(roundAnchor)![0];
  const changed = code.replace(roundAnchor, `${indent}patched(${JSON.stringify(newBuildPatch)});\n${roundAnchor}`);
  fs.writeFileSync(loop, `import { patched } from '@temporalio/workflow';\n${changed}`);
  return root;
}

const { EventType, WorkflowTaskFailedCause } = temporal.api.enums.v1;

/** What a turn's history says about the deploy: whether the new build ran it, and its nondeterminism failures. */
export async function deployFigures(
  client: Client,
  workflowId: string,
): Promise<{ onNewBuild: boolean; nondeterministic: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  let onNewBuild = false;
  let nondeterministic = 0;
  for (const event of history.events ?? []) {
    if (event.eventType === EventType.EVENT_TYPE_MARKER_RECORDED) {
      const details = event.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
      if (details && Buffer.from(details).toString('utf8').includes(newBuildPatch)) onNewBuild = true;
    }
    const failed = event.workflowTaskFailedEventAttributes;
    if (failed?.cause === WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR)
      nondeterministic++;
  }
  return { onNewBuild, nondeterministic };
}
