import { performance } from 'node:perf_hooks';
import type { BenchClient, BenchEvent } from './client';
import { benchMessage, type TurnKind } from './model-script';

export interface TurnResult {
  turnId?: string;
  ok: boolean;
  /** From sending POST /v1/sessions/:id/turns to receiving the terminal event on the SSE stream. */
  latencyMs: number;
  /** From the POST to the workflow time stamped on the terminal event: when the turn ended inside Temporal. */
  endedMs: number;
  /** Receiving the terminal event minus its workflow time: what the stream adds at the end. */
  endLagMs: number;
  /** For each checkpoint: receiving checkpoint.requested minus its workflow time, i.e. how late the human hears of it. */
  checkpointLagsMs: number[];
  /** How long POST /v1/sessions/:id/turns took to answer 202. */
  startMs: number;
  /** How long each POST /v1/turns/:id/checkpoints/:cp took to answer 200. */
  answerMs: number[];
  error?: string;
}

/** Answers a checkpoint as the bench's human would: approve the exam, then stop after it. */
function decisionFor(checkpoint: { name?: string; options?: string[] | null }): Record<string, unknown> {
  if (checkpoint.options && checkpoint.options.length > 0) {
    return {
      action: 'choose',
      choice: checkpoint.options.find((option) => option === 'Stop here') ?? checkpoint.options.at(-1),
    };
  }
  return { action: 'approve' };
}

const lagOf = (event: BenchEvent) => (event.at ? Date.now() - Date.parse(event.at) : Number.NaN);

/** Sends one message and follows the turn to its end over SSE, answering every checkpoint through the API. */
export async function runTurn(
  client: BenchClient,
  sessionId: string,
  kind: TurnKind,
  n: number,
  inFlight?: Set<string>,
): Promise<TurnResult> {
  const startedWall = Date.now();
  const started = performance.now();
  const answers: Array<Promise<void>> = [];
  const problems: string[] = [];
  const checkpointLagsMs: number[] = [];
  const answerMs: number[] = [];
  let startMs = Number.NaN;
  let turnId: string | undefined;
  const timed = async (what: Promise<void>, into: number[]) => {
    const at = performance.now();
    await what;
    into.push(performance.now() - at);
  };
  try {
    turnId = await client.startTurn(sessionId, benchMessage(kind, n));
    startMs = performance.now() - started;
    const id = turnId;
    inFlight?.add(id);
    const terminal = await client.follow(id, (event: BenchEvent) => {
      if (event.type === 'tool.end' && event.isError === true)
        problems.push(`tool ${String(event.name)} refused: ${JSON.stringify(event.result).slice(0, 200)}`);
      if (event.type === 'checkpoint.requested') {
        checkpointLagsMs.push(lagOf(event));
        const checkpoint = event.checkpoint as { id: string; name?: string; options?: string[] | null };
        answers.push(
          timed(client.answer(id, checkpoint.id, decisionFor(checkpoint)), answerMs).catch(
            (err: unknown) => void problems.push(String(err)),
          ),
        );
      }
    });
    const endLagMs = lagOf(terminal);
    const latencyMs = performance.now() - started;
    await Promise.all(answers);
    const endedMs = terminal.at ? Date.parse(terminal.at) - startedWall : Number.NaN;
    if (terminal.type !== 'done') problems.push(`turn ended with ${JSON.stringify(terminal).slice(0, 300)}`);
    return {
      turnId,
      ok: problems.length === 0,
      latencyMs,
      endedMs,
      endLagMs,
      checkpointLagsMs,
      startMs,
      answerMs,
      error: problems[0],
    };
  } catch (err) {
    await Promise.allSettled(answers);
    const error = err instanceof Error ? err.message : String(err);
    const latencyMs = performance.now() - started;
    return {
      turnId,
      ok: false,
      latencyMs,
      endedMs: Number.NaN,
      endLagMs: Number.NaN,
      checkpointLagsMs,
      startMs,
      answerMs,
      error,
    };
  } finally {
    if (turnId) inFlight?.delete(turnId);
  }
}
