import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { safeName, type SharedStore } from './shared-store';

const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

/** Entries hold users' conversations: readable by the workers' own user only, whatever the umask. */
const privateFile = { mode: 0o600 };
const privateFolder = { recursive: true, mode: 0o700 } as const;

/**
 * The store for one machine: a folder per scope, a file per entry (an entry's aliases are hard links to its file),
 * written to a temporary name and renamed, so a reader never sees half a file and workers on the machine (or containers
 * sharing the volume) need no lock. Writing an entry updates its folder's modification time, which is what `sweep()`
 * reads.
 */
export class FileStore implements SharedStore {
  constructor(
    readonly dir: string,
    private readonly retentionMs: number,
  ) {}

  get description(): string {
    return `files in ${this.dir}`;
  }

  async put(scope: string, key: string, value: string, aliases: readonly string[] = []): Promise<void> {
    const folder = this.folderOf(scope);
    const file = path.join(folder, safeName(key, sha256));
    const temporary = await this.writeTemporary(file, value);
    for (const alias of aliases) await this.link(temporary, path.join(folder, safeName(alias, sha256)), value);
    await fs.rename(temporary, file);
  }

  async get(scope: string, key: string): Promise<string | undefined> {
    try {
      return await fs.readFile(path.join(this.folderOf(scope), safeName(key, sha256)), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async sweep(): Promise<number> {
    const cutoff = Date.now() - this.retentionMs;
    let names: string[];
    try {
      names = await fs.readdir(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw err;
    }
    let removed = 0;
    for (const name of names) {
      const folder = path.join(this.dir, name);
      const stat = await fs.stat(folder).catch(() => undefined);
      if (!stat?.isDirectory() || stat.mtimeMs >= cutoff) continue;
      await fs.rm(folder, { recursive: true, force: true });
      removed++;
    }
    return removed;
  }

  async close(): Promise<void> {}

  /** The value in a new file next to `file` under a temporary name (the folder created if need be); its path. */
  private async writeTemporary(file: string, value: string): Promise<string> {
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await fs.writeFile(temporary, value, privateFile);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      await fs.mkdir(path.dirname(file), privateFolder);
      await fs.writeFile(temporary, value, privateFile);
    }
    return temporary;
  }

  /**
   * Gives the file a second name: no new file, so an alias costs a directory entry, not a file's creation. An existing
   * entry of that name is kept (entries are never updated); where hard links fail (some network shares), the alias is
   * written as a file of its own.
   */
  private async link(temporary: string, file: string, value: string): Promise<void> {
    try {
      await fs.link(temporary, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
      await fs.rename(await this.writeTemporary(file, value), file);
    }
  }

  private folderOf(scope: string): string {
    return path.join(this.dir, safeName(scope, sha256));
  }
}
