import { useEffect, useState } from 'preact/hooks';
import type { Turn } from '../../../lib/client';
import { client, messageOf } from '../api';
import { ArtifactView } from '../report/ArtifactView';
import { hrefOf } from '../router';

/** A turn's reports alone, to read and print. */
export function ReportPage({ turnId }: { turnId: string }) {
  const [turn, setTurn] = useState<Turn | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    client()
      .getTurn(turnId)
      .then(setTurn)
      .catch((err: unknown) => setError(messageOf(err)));
  }, [turnId]);
  return (
    <main id="main" class="report-page">
      <h1>Report</h1>
      {error ? (
        <p class="form-error" role="alert">
          {error}
        </p>
      ) : null}
      {turn === null && !error ? <p role="status">Loading…</p> : null}
      {turn ? (
        <>
          <p class="no-print">
            <a href={hrefOf({ view: 'session', id: turn.sessionId })}>Back to the conversation</a>{' '}
            <button type="button" onClick={() => print()}>
              Print
            </button>
          </p>
          {turn.artifacts.length === 0 ? <p>This turn has no report yet.</p> : null}
          {turn.artifacts.map((artifact, index) => (
            <ArtifactView key={index} name={artifact.name} data={artifact.data} id={`report-${index}`} />
          ))}
        </>
      ) : null}
    </main>
  );
}
