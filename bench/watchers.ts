import type { BenchClient } from './client';
import type { Stack } from './stack';
import { runTurn } from './turn';
import { scrapeWorkerMetrics, timingsBetween } from './worker-metrics';

export interface WatchersResult {
  /** SSE clients following each turn besides the one that drives it (and answers its checkpoints). */
  watchers: number;
  turns: number;
  /** Workflow tasks the worker executed, per turn (the SDK's workflow task execution histogram count). */
  workflowTasksPerTurn: number;
  /** `turnEvents`/`turnState` queries the API sent Temporal, per turn: each is a task on the worker too. */
  queriesPerTurn: number;
  /** DescribeWorkflowExecution calls of the API, per turn: answered by the server alone. */
  describesPerTurn: number;
  /** Watchers that saw the turn's terminal event, of watchers × turns. */
  watchersEnded: number;
  failed: string[];
}

/** The runTurn's in-flight set, used here to learn each turn's id as soon as it started. */
class StartedTurns extends Set<string> {
  constructor(private readonly onStart: (turnId: string) => void) {
    super();
  }

  override add(turnId: string): this {
    super.add(turnId);
    this.onStart(turnId);
    return this;
  }
}

/**
 * Worker work per turn with `watchers` SSE clients on each turn: `turns` exam turns one at a time, each driven by the
 * bench's client (which follows it and answers its checkpoints), while `watchers` more clients follow it to its end.
 * Run once with 0 and once with 100 watchers: the difference is what watching costs the worker.
 */
export async function measureWatchers(
  stack: Stack,
  client: BenchClient,
  watchers: number,
  turns: number,
): Promise<WatchersResult> {
  const failed: string[] = [];
  const rpcBefore = new Map(stack.apiRpcs);
  const before = await scrapeWorkerMetrics(stack.metricsUrl);
  let watchersEnded = 0;
  for (let n = 0; n < turns; n += 1) {
    const following: Array<Promise<unknown>> = [];
    const started = new StartedTurns((turnId) => {
      for (let i = 0; i < watchers; i += 1) {
        following.push(
          client.follow(turnId, () => undefined).then((terminal) => terminal.type === 'done' && (watchersEnded += 1)),
        );
      }
    });
    const result = await runTurn(client, await client.createSession(), 'exam', n, started);
    const outcomes = await Promise.allSettled(following);
    if (!result.ok) failed.push(`watchers ${watchers}: turn ${result.turnId ?? '?'}: ${result.error ?? 'failed'}`);
    const rejected = outcomes.find((outcome) => outcome.status === 'rejected');
    if (rejected) failed.push(`watchers ${watchers}: a watcher failed: ${String(rejected.reason)}`);
  }
  // The last task of a turn (its completion) may be reported a moment after the stream ended.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const tasks = timingsBetween(before, await scrapeWorkerMetrics(stack.metricsUrl)).wftExecution.count;
  const calls = (method: string) => (stack.apiRpcs.get(method) ?? 0) - (rpcBefore.get(method) ?? 0);
  return {
    watchers,
    turns,
    workflowTasksPerTurn: tasks / turns,
    queriesPerTurn: calls('QueryWorkflow') / turns,
    describesPerTurn: calls('DescribeWorkflowExecution') / turns,
    watchersEnded,
    failed,
  };
}

export function watchersTable(results: WatchersResult[]): string {
  return [
    '| watchers per turn | exam turns | worker workflow tasks per turn | API queries per turn | API describes per turn | watchers that saw the end |',
    '|--:|--:|--:|--:|--:|--:|',
    ...results.map(
      (r) =>
        `| ${r.watchers} | ${r.turns} | ${r.workflowTasksPerTurn.toFixed(1)} | ${r.queriesPerTurn.toFixed(1)} | ${r.describesPerTurn.toFixed(1)} | ${r.watchersEnded}/${r.watchers * r.turns} |`,
    ),
  ].join('\n');
}
