import type { Client } from '@temporalio/client';
import type { TurnEvent } from '../../core/events';
import { turnEventsQuery } from '../../workflows/definitions';
import { queryDeadlineMs } from '../deadlines';

/**
 * Reads a turn's log with the `turnEvents` query (a workflow task on the worker), a page of `pageSize` at a time from
 * `known()` on, handing each page to `take` until a short page (the end) or `stop()`. False when a query failed.
 */
export async function readLogPages(
  client: Client,
  turnId: string,
  pageSize: number,
  known: () => number,
  take: (page: TurnEvent[]) => void,
  stop: () => boolean,
): Promise<boolean> {
  while (!stop()) {
    const page = await queryPage(client, turnId, known(), pageSize);
    if (!page) return false;
    take(page);
    // A short page is the end; a longer one came from older workflow code that ignores the limit (all of it).
    if (page.length !== pageSize) break;
  }
  return true;
}

async function queryPage(client: Client, turnId: string, after: number, limit: number): Promise<TurnEvent[] | null> {
  try {
    return await client.connection.withDeadline(Date.now() + queryDeadlineMs, () =>
      client.workflow.getHandle(turnId).query(turnEventsQuery, after, limit),
    );
  } catch {
    return null;
  }
}
