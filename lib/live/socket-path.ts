import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';

/** Unix socket paths are limited to about 108 bytes; longer data dirs get a short path derived from them. */
const maxSocketPathBytes = 100;

/**
 * Where the API's local live socket lives. Worker and API compute the same path from the same data dir, so
 * `npm start` (which gives both the same SKILLFLOW_DATA_DIR) needs no extra setting.
 */
export function liveSocketPath(dataDir: string, override?: string): string {
  if (override) return override;
  const digest = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  if (process.platform === 'win32') return `\\\\.\\pipe\\skillflow-live-${digest}`;
  const inDataDir = path.join(path.resolve(dataDir), 'live.sock');
  if (Buffer.byteLength(inDataDir) <= maxSocketPathBytes) return inDataDir;
  return path.join(os.tmpdir(), `skillflow-live-${digest}.sock`);
}
