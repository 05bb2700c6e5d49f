import fs from 'node:fs';
import path from 'node:path';
import { SkillflowApiError, SkillflowClient } from '../lib/client';

type Env = Record<string, string | undefined>;

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
  const url = env.SKILLFLOW_URL?.trim() || `http://127.0.0.1:${env.PORT?.trim() || '3000'}`;
  let apiKey = env.SKILLFLOW_API_KEY?.trim() || undefined;
  let keySource = 'SKILLFLOW_API_KEY';
  if (!apiKey) {
    const file = path.resolve(cwd, env.SKILLFLOW_DATA_DIR?.trim() || '.data', 'api-key');
    keySource = file;
    if (fs.existsSync(file)) apiKey = fs.readFileSync(file, 'utf8').trim();
  }
  return { client: new SkillflowClient({ baseUrl: url, apiKey }), url, keySource };
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
