import fs from 'node:fs';
import path from 'node:path';
import { SkillflowApiError, SkillflowClient } from '../lib/client';

type Env = Record<string, string | undefined>;

/** A connection setting the CLI cannot use, with what to write instead. */
export class ConnectionSettingError extends Error {
  override name = 'ConnectionSettingError';
}

export interface Connection {
  client: SkillflowClient;
  url: string;
  keySource: string;
}

/**
 * The API the CLI talks to: SKILLFLOW_URL (default the local API, http://127.0.0.1:$PORT) with SKILLFLOW_API_KEY,
 * else the key `npm start` generated into the data dir ($SKILLFLOW_DATA_DIR/api-key).
 */
export function connect(env: Env, cwd: string): Connection {
  const url = apiUrl(env);
  let apiKey = env.SKILLFLOW_API_KEY?.trim() || undefined;
  let keySource = 'SKILLFLOW_API_KEY';
  if (!apiKey) {
    const file = path.resolve(cwd, env.SKILLFLOW_DATA_DIR?.trim() || '.data', 'api-key');
    keySource = file;
    if (fs.existsSync(file)) apiKey = fs.readFileSync(file, 'utf8').trim();
  }
  return { client: new SkillflowClient({ baseUrl: url, apiKey }), url, keySource };
}

/** SKILLFLOW_URL as an http(s) URL; a value without its scheme (`localhost:3000`) is refused with the fix. */
function apiUrl(env: Env): string {
  const configured = env.SKILLFLOW_URL?.trim();
  if (!configured) return `http://127.0.0.1:${env.PORT?.trim() || '3000'}`;
  let parsed: URL | undefined;
  try {
    parsed = new URL(configured);
  } catch {
    parsed = undefined;
  }
  if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:')) return configured;
  throw new ConnectionSettingError(
    `SKILLFLOW_URL=${JSON.stringify(configured)} is not an http(s) URL. Write it with its scheme, for example SKILLFLOW_URL=http://${configured.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')}.`,
  );
}

/** What to tell a user about an API error they can act on. */
export function explain(err: unknown, connection: Pick<Connection, 'url' | 'keySource'>): string {
  if (!(err instanceof SkillflowApiError)) return (err as Error)?.stack ?? String(err);
  if (err.status === 0) {
    return `${err.message}\nIs it running? Start it with \`npm start\`, or point SKILLFLOW_URL at it.`;
  }
  if (err.status === 401) {
    return `The API refused the key (${err.message}). Set SKILLFLOW_API_KEY to a key of the API (the key was read from ${connection.keySource}).`;
  }
  return `${err.message} (${err.status} ${err.code}${err.requestId ? `, request ${err.requestId}` : ''})`;
}
