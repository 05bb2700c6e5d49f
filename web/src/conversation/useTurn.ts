import { useEffect, useState } from 'preact/hooks';
import { SkillflowApiError } from '../../../lib/client';
import { client as apiClient } from '../api';
import { emptyTurn, isEnded, lastOffset, withEvent, type TurnState } from './model';

export type Connection =
  | { kind: 'reading' }
  | { kind: 'live' }
  | { kind: 'reconnecting'; attempt: number; reason: string }
  | { kind: 'ended' }
  | { kind: 'failed'; message: string };

const maxWaitMs = 5_000;

/**
 * A turn's events, kept equal to its log: an ended turn's log is read once; a running one is followed over SSE, from
 * the last offset held whenever the stream drops (the client resumes with Last-Event-ID, and when it gives up this
 * waits and follows again, as long as the page is open: an API restart is a pause, not an end). A refusal (401, 403,
 * 404) ends it: the credential no longer reaches the turn.
 */
export function useTurn(turnId: string, ended: boolean): [TurnState, Connection] {
  const [state, setState] = useState<TurnState>(emptyTurn);
  const [connection, setConnection] = useState<Connection>({ kind: 'reading' });
  useEffect(() => {
    const stop = new AbortController();
    let current = emptyTurn;
    const apply = (event: Parameters<typeof withEvent>[1]) => {
      current = withEvent(current, event);
      setState(current);
    };
    void (async () => {
      const client = apiClient();
      if (ended) {
        try {
          for (const event of await client.getTurnLog(turnId)) apply(event);
          setConnection({ kind: 'ended' });
        } catch (err) {
          setConnection({ kind: 'failed', message: (err as Error).message });
        }
        return;
      }
      for (let attempt = 1; !stop.signal.aborted; attempt += 1) {
        try {
          setConnection(attempt === 1 ? { kind: 'reading' } : { kind: 'live' });
          for await (const event of client.followTurn(turnId, { after: lastOffset(current), signal: stop.signal })) {
            apply(event);
            setConnection({ kind: 'live' });
            attempt = 1;
          }
          if (isEnded(current)) return setConnection({ kind: 'ended' });
        } catch (err) {
          if (err instanceof SkillflowApiError && err.status >= 400 && err.status < 500 && err.status !== 429)
            return setConnection({ kind: 'failed', message: err.message });
          if (stop.signal.aborted) return;
          setConnection({ kind: 'reconnecting', attempt, reason: (err as Error).message });
          await new Promise((resolve) => setTimeout(resolve, Math.min(maxWaitMs, 500 * attempt)));
        }
      }
    })();
    return () => stop.abort();
  }, [turnId, ended]);
  return [state, connection];
}
