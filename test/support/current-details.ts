import type { WorkflowHandle } from '@temporalio/client';

/** What the Temporal UI shows as a workflow's current details (the UI runs this query for a running workflow). */
export async function currentDetails(handle: WorkflowHandle): Promise<string> {
  const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
  return metadata.currentDetails ?? '';
}

/** The answers the details offer ready to paste: the list item of each action, its inline code parsed. */
export function pastedAnswers(details: string): Record<string, Record<string, unknown>> {
  const items = [...details.matchAll(/^- (approve|modify|cancel|choose|answer): (`+) ?(.*?) ?\2$/gm)];
  return Object.fromEntries(items.map(([, action, , json]) => [action, JSON.parse(json) as Record<string, unknown>]));
}
