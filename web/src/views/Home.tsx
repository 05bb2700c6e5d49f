import { useEffect, useState } from 'preact/hooks';
import type { SessionList } from '../../../lib/client';
import { client, messageOf } from '../api';
import { shortTime } from '../clock';
import { go, hrefOf } from '../router';

/** The caller's sessions, newest first, and a new one. */
export function Home() {
  const [sessions, setSessions] = useState<SessionList['sessions'] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    client()
      .listSessions({ limit: 50 })
      .then((page) => setSessions(page.sessions))
      .catch((err: unknown) => setError(messageOf(err)));
  }, []);
  async function newSession() {
    try {
      const { id } = await client().createSession({ idempotencyKey: crypto.randomUUID() });
      go({ view: 'session', id });
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <main id="main">
      <h1>Conversations</h1>
      <p>
        <button type="button" class="primary" onClick={() => void newSession()}>
          New conversation
        </button>{' '}
        or start a skill from the <a href={hrefOf({ view: 'catalog' })}>catalog</a>.
      </p>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {sessions === null ? (
        <p role="status">Loading…</p>
      ) : sessions.length === 0 ? (
        <p>No conversations yet.</p>
      ) : (
        <ul class="sessions">
          {sessions.map((session) => (
            <li key={session.id}>
              <a href={hrefOf({ view: 'session', id: session.id })}>{session.id}</a>{' '}
              <span class="muted">
                {session.userId}, {shortTime(session.createdAt)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}
