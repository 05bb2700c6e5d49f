import { useState } from 'preact/hooks';
import { messageOf, signInWithKey } from '../api';

/** Sign-in with an API key: kept for this tab only. */
export function SignIn({ problem }: { problem?: string | null }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signInWithKey(key.trim());
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  }
  return (
    <main class="sign-in" id="main">
      <h1>skillflow</h1>
      {problem ? (
        <p class="form-error" role="alert">
          {problem}
        </p>
      ) : null}
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in</h2>
        <p>
          With your API key, kept in this tab only until you close it. A learner with an answer link just opens the
          link.
        </p>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          required
          value={key}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'api-key-error' : undefined}
          onInput={(event) => setKey((event.currentTarget as HTMLInputElement).value)}
        />
        {error ? (
          <p id="api-key-error" class="field-error">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy || key.trim() === ''}>
          Sign in
        </button>
      </form>
    </main>
  );
}
