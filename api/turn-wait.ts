import type { Client } from '@temporalio/client';
import type { Caller } from './caller';
import type { TurnView } from '../core/protocol';
import { readTurn, type TurnStates } from './turn-view';

/**
 * Polls the turn until it has ended or waits at a checkpoint, for at most `timeoutMs`; null when it is still running
 * then, or when the client went away (`signal`).
 */
export async function waitForTurnToSettle(
  client: Client,
  caller: Caller,
  turnId: string,
  timeoutMs: number,
  signal: AbortSignal,
  states?: TurnStates,
): Promise<TurnView | null> {
  const deadline = Date.now() + timeoutMs;
  let delay = 150;
  while (!signal.aborted) {
    const turn = await readTurn(client, caller, turnId, states);
    if (turn.status !== 'running') return turn;
    const left = deadline - Date.now();
    if (left <= 0) return null;
    await sleep(Math.min(delay, left), signal);
    delay = Math.min(delay * 1.5, 1_000);
  }
  return null;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
