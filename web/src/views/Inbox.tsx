import { useCallback, useEffect, useState } from 'preact/hooks';
import type { Turn } from '../../../lib/client';
import { client, messageOf } from '../api';
import { shortTime } from '../clock';
import { CheckpointForm } from '../forms/CheckpointForm';
import { Countdown } from '../forms/Countdown';
import { hrefOf } from '../router';
import { temporalRunUrl, useAppConfig } from '../app-config';

/** How often the inbox reads the waiting turns again while it is open. */
const refreshMs = 10_000;

/**
 * Turns waiting for a human: the caller's own, or everyone's for an operator key (the API decides), with the skill,
 * user, checkpoint, waiting since and deadline; each answered in place, or opened, or looked at in the Temporal UI.
 */
export function Inbox() {
  const [turns, setTurns] = useState<Turn[] | null>(null);
  const [owners, setOwners] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const config = useAppConfig();
  const reload = useCallback(async () => {
    try {
      const api = client();
      const page = await api.listTurns({ status: 'waiting', limit: 100 });
      const read = await Promise.all(page.turns.map((turn) => api.getTurn(turn.id).catch(() => null)));
      setOwners(Object.fromEntries(page.turns.map((turn) => [turn.id, turn.userId])));
      setTurns(read.filter((turn): turn is Turn => turn !== null && turn.pendingCheckpoint !== null));
      setError(null);
    } catch (err) {
      setError(messageOf(err));
    }
  }, []);
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), refreshMs);
    return () => clearInterval(timer);
  }, [reload]);
  return (
    <main id="main">
      <h1>Inbox</h1>
      <p>
        Turns waiting for a person.{' '}
        <button type="button" onClick={() => void reload()}>
          Refresh
        </button>
      </p>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {turns === null && !error ? <p role="status">Loading…</p> : null}
      {turns !== null && turns.length === 0 ? <p>Nothing is waiting.</p> : null}
      {turns !== null && turns.length > 0 ? (
        <table class="inbox">
          <caption class="visually-hidden">Waiting turns</caption>
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col">User</th>
              <th scope="col">Checkpoint</th>
              <th scope="col">Waiting since</th>
              <th scope="col">Deadline</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {turns.map((turn) => {
              const checkpoint = turn.pendingCheckpoint!;
              const runUrl = temporalRunUrl(config, turn.workflowId);
              const rows = [
                <tr key={turn.id} data-inbox-turn={turn.id}>
                  <td>{checkpoint.skill ?? turn.skill ?? '—'}</td>
                  <td>{owners[turn.id] ?? '—'}</td>
                  <td>
                    <code>{checkpoint.name}</code>
                  </td>
                  <td>
                    <time dateTime={checkpoint.requestedAt}>{shortTime(checkpoint.requestedAt)}</time>
                  </td>
                  <td>
                    {checkpoint.expiresAt ? (
                      <Countdown until={checkpoint.expiresAt} label={`Time left for ${turn.id}`} />
                    ) : (
                      'none'
                    )}
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      aria-expanded={open === turn.id}
                      aria-controls={`answer-${turn.id}`}
                      onClick={() => setOpen(open === turn.id ? null : turn.id)}
                    >
                      {open === turn.id ? 'Close' : 'Answer'}
                      <span class="visually-hidden">
                        {' '}
                        {checkpoint.name} of {owners[turn.id] ?? turn.id}
                      </span>
                    </button>{' '}
                    <a href={hrefOf({ view: 'session', id: turn.sessionId })}>
                      Open<span class="visually-hidden"> the conversation of {turn.id}</span>
                    </a>
                    {runUrl ? (
                      <>
                        {' '}
                        <a href={runUrl} target="_blank" rel="noopener noreferrer">
                          Temporal UI<span class="visually-hidden"> for {turn.id}</span>
                        </a>
                      </>
                    ) : null}
                  </td>
                </tr>,
              ];
              if (open === turn.id)
                rows.push(
                  <tr key={`${turn.id}-answer`} id={`answer-${turn.id}`}>
                    <td colSpan={6}>
                      <CheckpointForm
                        turnId={turn.id}
                        checkpoint={checkpoint}
                        onAnswered={() => {
                          setOpen(null);
                          void reload();
                        }}
                      />
                    </td>
                  </tr>,
                );
              return rows;
            })}
          </tbody>
        </table>
      ) : null}
    </main>
  );
}
