import { useState } from 'preact/hooks';
import { apiPost, messageOf } from '../api';

interface CreatedLink {
  id: string;
  url: string;
  expiresAt: string;
}

/** The session's owner (or an operator) makes an answer link to send a learner: who may answer what, until when. */
export function LinkPanel({ sessionId }: { sessionId: string }) {
  const [pattern, setPattern] = useState('');
  const [messages, setMessages] = useState(false);
  const [days, setDays] = useState('7');
  const [created, setCreated] = useState<CreatedLink | null>(null);
  const [error, setError] = useState<string | null>(null);
  async function submit(event: Event) {
    event.preventDefault();
    setError(null);
    try {
      setCreated(
        await apiPost<CreatedLink>(`/v1/sessions/${encodeURIComponent(sessionId)}/links`, {
          ...(pattern.trim() ? { checkpoints: pattern.trim() } : {}),
          messages,
          expiresInSeconds: Math.round(Number(days) * 86_400),
        }),
      );
    } catch (err) {
      setError(messageOf(err));
    }
  }
  return (
    <details class="link-panel">
      <summary>Answer link for someone else</summary>
      <form onSubmit={submit}>
        <label for="link-pattern">Checkpoints they may answer (a pattern such as question*; empty: all)</label>
        <input
          id="link-pattern"
          type="text"
          value={pattern}
          onInput={(event) => setPattern((event.currentTarget as HTMLInputElement).value)}
        />
        <label class="choice" for="link-messages">
          <input
            id="link-messages"
            type="checkbox"
            checked={messages}
            onChange={(event) => setMessages((event.currentTarget as HTMLInputElement).checked)}
          />{' '}
          They may send messages
        </label>
        <label for="link-days">Valid for (days)</label>
        <input
          id="link-days"
          type="number"
          min={1}
          max={30}
          value={days}
          onInput={(event) => setDays((event.currentTarget as HTMLInputElement).value)}
        />
        <button type="submit">Make a link</button>
      </form>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {created ? (
        <p>
          <label for="link-url">Send this link (valid until {new Date(created.expiresAt).toLocaleString()}):</label>
          <input id="link-url" type="text" readOnly value={created.url} />
        </p>
      ) : null}
    </details>
  );
}
