import { randomBytes } from 'node:crypto';
import { constants, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { SkillSnapshot } from '../../core/skills';
import type { SkillFile } from './hash';
import { isInside } from './reader';

/** What the store records about one pinned version. */
interface PinRecord {
  name: string;
  hash: string;
  resources: string[];
}

const hashPattern = /^[0-9a-f]{64}$/;

/**
 * Content-addressed copies of pinned skill versions: `<dir>/<hash>/pin.json` and `<dir>/<hash>/files/<path>`.
 * A version is written once, atomically (a temporary folder renamed into place), and never changed, so a turn
 * reads the bytes it pinned however the skill folder changes later.
 */
export class SkillStore {
  constructor(readonly dir: string) {}

  async has(hash: string): Promise<boolean> {
    return (await this.pin(hash)) !== null;
  }

  async put(record: PinRecord, files: SkillFile[]): Promise<void> {
    if (!hashPattern.test(record.hash)) throw new Error(`not a skill hash: ${record.hash}`);
    if (await this.has(record.hash)) return;
    await fsp.mkdir(this.dir, { recursive: true });
    const staging = path.join(this.dir, `.staging-${record.hash.slice(0, 12)}-${randomBytes(6).toString('hex')}`);
    try {
      for (const file of files) {
        const target = path.join(staging, 'files', ...file.rel.split('/'));
        await fsp.mkdir(path.dirname(target), { recursive: true });
        await fsp.writeFile(target, file.bytes, { flag: 'wx' });
      }
      await fsp.writeFile(path.join(staging, 'pin.json'), JSON.stringify(record));
      await fsp.rename(staging, path.join(this.dir, record.hash));
    } catch (error) {
      await fsp.rm(staging, { recursive: true, force: true });
      // Another worker pinned the same version first: same hash, same bytes.
      if (!(await this.has(record.hash))) throw error;
    }
  }

  /** The pinned version's record, or null when the store does not hold it. */
  async pin(hash: string): Promise<PinRecord | null> {
    if (!hashPattern.test(hash)) return null;
    try {
      return JSON.parse(await fsp.readFile(path.join(this.dir, hash, 'pin.json'), 'utf8')) as PinRecord;
    } catch {
      return null;
    }
  }

  /**
   * Keeps the snapshot (manifest and sanitized text) of a pinned version beside its files, so a turn that continues a
   * plan reads it back by hash (a carried plan names its skill, it does not hold it). Written once, atomically.
   */
  async putSnapshot(snapshot: SkillSnapshot): Promise<void> {
    if (!(await this.has(snapshot.hash))) throw new Error(`skill version ${snapshot.hash} is not pinned`);
    const target = path.join(this.dir, snapshot.hash, 'snapshot.json');
    if (await this.snapshot(snapshot.hash)) return;
    const staging = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    await fsp.writeFile(staging, JSON.stringify(snapshot), { flag: 'wx' });
    await fsp.rename(staging, target);
  }

  /** The snapshot of a pinned version, or null when the store does not hold it (or holds an unreadable one). */
  async snapshot(hash: string): Promise<SkillSnapshot | null> {
    if (!hashPattern.test(hash)) return null;
    try {
      const snapshot = JSON.parse(
        await fsp.readFile(path.join(this.dir, hash, 'snapshot.json'), 'utf8'),
      ) as SkillSnapshot;
      return snapshot.hash === hash ? snapshot : null;
    } catch {
      return null;
    }
  }

  /** Bytes of a resource of a pinned version; the path must already be checked and listed in the pin. */
  async readFile(hash: string, rel: string, maxBytes: number): Promise<Buffer> {
    const root = path.join(this.dir, hash, 'files');
    const target = path.join(root, ...rel.split('/'));
    const real = await fsp.realpath(target);
    if (!isInside(await fsp.realpath(root), real)) throw new Error(`${rel} leads outside the pinned copy`);
    const handle = await fsp.open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const stat = await handle.stat();
      if (!stat.isFile() || stat.size > maxBytes)
        throw new Error(`${rel} is not a regular file within ${maxBytes} bytes`);
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }
}
