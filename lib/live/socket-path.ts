import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Unix socket paths are limited to about 108 bytes; longer data dirs get a short path derived from them. */
const maxSocketPathBytes = 100;

export class LiveSocketPathError extends Error {
  override name = 'LiveSocketPathError';
}

/**
 * Where the API's local live socket lives. Worker and API compute the same path from the same data dir, so
 * `npm start` (which gives both the same SKILLFLOW_DATA_DIR) needs no extra setting. When the data dir's path is too
 * long for a socket, the socket goes into a directory of this user's own in the temp dir (`skillflow-<uid>`, mode
 * 0700): never straight into the shared temp dir, where another local user could bind the name first.
 */
export function liveSocketPath(dataDir: string, override?: string, tempDir = os.tmpdir()): string {
  if (override) return override;
  const digest = createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16);
  if (process.platform === 'win32') return `\\\\.\\pipe\\skillflow-live-${digest}`;
  const inDataDir = path.join(path.resolve(dataDir), 'live.sock');
  if (Buffer.byteLength(inDataDir) <= maxSocketPathBytes) return inDataDir;
  return path.join(tempDir, privateDirName(), `live-${digest}.sock`);
}

/** `skillflow-<uid>`: the temp dir home of this user's sockets. */
function privateDirName(): string {
  return `skillflow-${process.getuid?.() ?? 'user'}`;
}

/**
 * Creates the socket's directory. The private temp dir must be a real directory (not a symlink) that this user owns
 * and nobody else may enter; anything else there was not made by skillflow for this user, and is refused.
 */
export function prepareSocketDir(socketPath: string): void {
  if (process.platform === 'win32') return;
  const dir = path.dirname(socketPath);
  if (path.basename(dir) !== privateDirName()) {
    fs.mkdirSync(dir, { recursive: true });
    return;
  }
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const stat = fs.lstatSync(dir);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) {
    throw new LiveSocketPathError(
      `${dir} must be a directory of this user (uid ${uid}) with mode 0700; it is ${stat.isDirectory() ? `owned by uid ${stat.uid} with mode ${(stat.mode & 0o777).toString(8)}` : 'not a directory'}. ` +
        'Remove it, or set SKILLFLOW_LIVE_SOCKET (or a shorter SKILLFLOW_DATA_DIR).',
    );
  }
}

/**
 * Why a worker must not connect to the socket at `socketPath`, or null when it may: it must be a socket owned by this
 * process's user. A socket of another user would receive every model delta (a local user binding the name first).
 */
export function untrustedSocketReason(socketPath: string): string | null {
  if (process.platform === 'win32') return null;
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch {
    return null; // Not there (yet): connecting fails on its own and is retried.
  }
  if (!stat.isSocket()) return `${socketPath} is not a socket`;
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    return `${socketPath} belongs to uid ${stat.uid}, not to this process's user (uid ${uid})`;
  return null;
}
