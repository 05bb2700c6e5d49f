import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

export interface HistorySummary {
  events: number;
  workflowTasks: number;
  activities: Record<string, number>;
}

/** What one workflow cost Temporal: its history length, workflow tasks and activities by type. */
export async function summarizeHistory(client: Client, workflowId: string): Promise<HistorySummary> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const events = history.events ?? [];
  const activities: Record<string, number> = {};
  let workflowTasks = 0;
  for (const event of events) {
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) workflowTasks++;
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const name = scheduled.activityType?.name ?? '?';
      activities[name] = (activities[name] ?? 0) + 1;
    }
  }
  return { events: events.length, workflowTasks, activities };
}

export const describeHistory = (summary: HistorySummary): string =>
  `${summary.events} history events, ${summary.workflowTasks} workflow tasks, activities ` +
  (Object.entries(summary.activities)
    .map(([name, n]) => `${name}×${n}`)
    .join(', ') || 'none');
