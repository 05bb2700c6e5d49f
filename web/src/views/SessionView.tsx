import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Session } from '../../../lib/client';
import { apiPost, client, messageOf } from '../api';
import type { Credential } from '../credentials';
import { TurnView } from '../conversation/TurnView';
import { LinkPanel } from './LinkPanel';

const endedStatuses = new Set(['completed', 'failed', 'cancelled']);
/** While nothing runs, the page looks for a turn someone else started (a teacher starting the exam) this often. */
const idleRefreshMs = 5_000;

/** A conversation: its turns, each as its events say, and a message box for the next one. */
export function SessionView({ id, credential }: { id: string; credential: Credential }) {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    client()
      .getSession(id)
      .then((read) => {
        setSession(read);
        setError(null);
      })
      .catch((err: unknown) => setError(messageOf(err)));
  }, [id]);
  useEffect(reload, [reload]);
  useEffect(() => {
    if (!session || session.activeTurnId) return;
    const timer = setInterval(reload, idleRefreshMs);
    return () => clearInterval(timer);
  }, [session, reload]);
  const mayWrite = credential.kind === 'key' || credential.link.messages;
  return (
    <main id="main" class="session">
      <h1>Conversation</h1>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {session === null ? (
        error ? null : (
          <p role="status">Loading…</p>
        )
      ) : (
        <>
          {session.turns.length === 0 ? <p>No turns yet.</p> : null}
          {session.turns.map((turn) => (
            <TurnView
              key={turn.id}
              turnId={turn.id}
              message={turn.message}
              ended={endedStatuses.has(turn.status)}
              onEnded={reload}
            />
          ))}
          {session.activeTurnId && credential.kind === 'key' ? <CancelTurn turnId={session.activeTurnId} /> : null}
          {mayWrite ? <Composer sessionId={id} busy={session.activeTurnId !== null} onStarted={reload} /> : null}
          {credential.kind === 'key' ? <LinkPanel sessionId={id} /> : null}
        </>
      )}
    </main>
  );
}

function Composer({ sessionId, busy, onStarted }: { sessionId: string; busy: boolean; onStarted: () => void }) {
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sending, setSending] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setSending(true);
    setError(null);
    try {
      await client().startTurn(sessionId, { message }, { idempotencyKey: crypto.randomUUID() });
      setMessage('');
      onStarted();
    } catch (err) {
      setError(messageOf(err));
    }
    setSending(false);
  }
  return (
    <form class="composer" onSubmit={submit} aria-label="Send a message">
      <label for="composer-message">Message</label>
      <textarea
        id="composer-message"
        rows={3}
        value={message}
        aria-describedby={busy ? 'composer-busy' : undefined}
        onInput={(event) => setMessage((event.currentTarget as HTMLTextAreaElement).value)}
      />
      {busy ? (
        <p id="composer-busy" class="hint">
          A turn is running or waiting; send your next message once it ends.
        </p>
      ) : null}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      <button type="submit" class="primary" disabled={busy || sending || message.trim() === ''}>
        Send
      </button>
    </form>
  );
}

function CancelTurn({ turnId }: { turnId: string }) {
  const [state, setState] = useState<'idle' | 'confirm' | 'sent'>('idle');
  const [error, setError] = useState<string | null>(null);
  async function cancel() {
    try {
      await apiPost(`/v1/turns/${encodeURIComponent(turnId)}/cancel`);
      setState('sent');
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <div class="cancel-turn">
      {state === 'idle' ? (
        <button type="button" onClick={() => setState('confirm')}>
          Cancel this turn…
        </button>
      ) : state === 'confirm' ? (
        <>
          <button type="button" class="danger" onClick={() => void cancel()}>
            Yes, cancel the turn
          </button>{' '}
          <button type="button" onClick={() => setState('idle')}>
            Keep it running
          </button>
        </>
      ) : (
        <p role="status">Cancel requested.</p>
      )}
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
