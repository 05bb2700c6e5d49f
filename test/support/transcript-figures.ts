import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { transcriptMissType } from '../../core/transcript';

const { History } = temporal.api.history.v1;

/** What a turn's history says about its model calls: how many, on which workers, how many missed, its size. */
export interface TranscriptFigures {
  /** Model call activities scheduled: one per round, plus one more for each round that missed and was sent whole. */
  modelCalls: number;
  rounds: number;
  /** Model call activities whose input carried the whole conversation (a turn's first call always does). */
  wholeConversations: number;
  /** Model call attempts that failed with TranscriptMiss. */
  misses: number;
  /** Attempts per worker identity. */
  workers: Record<string, number>;
  historyBytes: number;
  /** The turn's whole history (encoded as Temporal stores it) divided by its rounds. */
  bytesPerRound: number;
}

export async function transcriptFigures(client: Client, workflowId: string): Promise<TranscriptFigures> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const modelCallIds = new Set<string>();
  const figures: TranscriptFigures = {
    modelCalls: 0,
    rounds: 0,
    wholeConversations: 0,
    misses: 0,
    workers: {},
    historyBytes: 0,
    bytesPerRound: 0,
  };
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'callModel') {
      modelCallIds.add(String(event.eventId));
      figures.modelCalls++;
      const data = scheduled.input?.payloads?.[0]?.data;
      const input = data ? (JSON.parse(Buffer.from(data).toString('utf8')) as { delta?: unknown }) : {};
      if (!input.delta) figures.wholeConversations++;
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started && modelCallIds.has(String(started.scheduledEventId))) {
      const identity = started.identity ?? '?';
      figures.workers[identity] = (figures.workers[identity] ?? 0) + 1;
    }
    const failure = event.activityTaskFailedEventAttributes?.failure;
    if (failure?.applicationFailureInfo?.type === transcriptMissType) figures.misses++;
  }
  figures.historyBytes = History.encode(history).finish().length;
  figures.rounds = figures.modelCalls - figures.misses;
  figures.bytesPerRound = figures.rounds > 0 ? figures.historyBytes / figures.rounds : 0;
  return figures;
}
