import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './config';

/**
 * A secret kept in a file of the data dir: created once, exclusively and atomically (written to a private temporary
 * file, then linked into place, so a second process starting at the same moment reads the finished file or creates
 * none), readable by its owner only. An existing file that others may read, or that another user owns, is refused:
 * it may have been read or planted.
 */
export function readOrCreateSecretFile(file: string, generate: () => string): { value: string; created: boolean } {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    fs.writeFileSync(temporary, `${generate()}\n`, { mode: 0o600, flag: 'wx' });
    fs.linkSync(temporary, file);
    return { value: fs.readFileSync(file, 'utf8').trim(), created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(temporary, { force: true });
  }
  return { value: readPrivateFile(file), created: false };
}

/** The secret a file of the data dir holds, checked as above; undefined when there is no such file. */
export function readSecretFile(file: string): string | undefined {
  try {
    return readPrivateFile(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function readPrivateFile(file: string): string {
  const handle = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  try {
    const stat = fs.fstatSync(handle);
    if (process.platform !== 'win32') {
      if ((stat.mode & 0o077) !== 0) {
        throw new ConfigError(
          `${file} can be read or written by other users (mode ${(stat.mode & 0o777).toString(8)}): run chmod 600 ${file}, or delete it to generate a new one.`,
        );
      }
      if (typeof process.getuid === 'function' && stat.uid !== process.getuid()) {
        throw new ConfigError(`${file} belongs to another user (uid ${stat.uid}): delete it to generate a new one.`);
      }
    }
    return fs.readFileSync(handle, 'utf8').trim();
  } finally {
    fs.closeSync(handle);
  }
}
