import { performance } from 'node:perf_hooks';
import { examDecision } from '../test/support/exam-script';
import type { BenchClient } from './client';

/**
 * Follows an exam turn (test/support/exam-script.ts) on its SSE stream from its first event to its end, answering each
 * checkpoint through the API as soon as its `checkpoint.requested` arrives, as the exam's human would. `answeredAt`
 * gets the `performance.now()` at which each answer started to be POSTed, in the order of the checkpoints.
 */
export async function followExam(client: BenchClient, turnId: string, answeredAt: number[] = []): Promise<void> {
  const answers: Array<Promise<void>> = [];
  const refused: string[] = [];
  // A refused answer leaves the turn waiting for it: stop following, and fail this exam (not the whole run).
  const stop = new AbortController();
  const refuse = (err: unknown) => {
    refused.push(String(err));
    stop.abort();
  };
  try {
    const terminal = await client.follow(
      turnId,
      (event) => {
        if (event.type !== 'checkpoint.requested') return;
        const checkpoint = event.checkpoint as { id: string; name: string; options?: string[] | null };
        answeredAt.push(performance.now());
        answers.push(client.answer(turnId, checkpoint.id, { ...examDecision(checkpoint) }).catch(refuse));
      },
      stop.signal,
    );
    if (terminal.type !== 'done')
      throw new Error(`turn ${turnId} ended with ${JSON.stringify(terminal).slice(0, 200)}`);
  } catch (err) {
    if (refused.length === 0) throw err;
  } finally {
    await Promise.all(answers);
  }
  if (refused.length > 0) throw new Error(`turn ${turnId}: an answer was refused: ${refused[0]}`);
}
