import { constants, promises as fsp } from 'node:fs';
import path from 'node:path';

/** How the registry reads skill files; tests wrap it to see what is read when. */
export interface SkillFileReader {
  /**
   * Reads SKILL.md from its start up to and including the line that closes the front matter, and no further
   * than `maxBytes`. `complete` is false when the limit was reached first.
   */
  readFrontmatter(file: string, maxBytes: number): Promise<{ text: string; complete: boolean }>;
  /** Reads a whole regular file that must resolve inside `root` (symlinks leaving it are refused). */
  readFile(file: string, root: string, maxBytes: number): Promise<Buffer>;
}

export class OutsideSkillFolderError extends Error {
  override name = 'OutsideSkillFolderError';
}

export class FileTooLargeError extends Error {
  override name = 'FileTooLargeError';
}

/**
 * Why a file could not be read, for a skill problem: the error code and its meaning (`EACCES: permission denied`),
 * never the absolute path Node puts in its messages. Problems reach the CLI, the API's logs and the model.
 */
export function readFailure(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (error instanceof OutsideSkillFolderError || error instanceof FileTooLargeError) return message;
  if (typeof code === 'string') {
    const meaning = /^[A-Z0-9_]+: ([^,]+)/.exec(message ?? '')?.[1];
    return meaning ? `${code}: ${meaning}` : code;
  }
  return error instanceof Error ? error.name : 'unknown error';
}

const chunkBytes = 4096;

/** Offset just past the line closing the front matter (`---` alone on a line, after the first line), or -1. */
function closingLineEnd(buffer: Buffer, atEof: boolean): number {
  for (let at = buffer.indexOf('\n---', 3); at !== -1; at = buffer.indexOf('\n---', at + 1)) {
    let end = at + 4;
    while (buffer[end] === 0x20 || buffer[end] === 0x09) end += 1;
    if (buffer[end] === 0x0d) end += 1;
    if (buffer[end] === 0x0a) return end + 1;
    if (end >= buffer.length && atEof) return end;
  }
  return -1;
}

export function isInside(root: string, target: string): boolean {
  return target === root || target.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

export const nodeSkillFileReader: SkillFileReader = {
  async readFrontmatter(file, maxBytes) {
    const handle = await fsp.open(file, 'r');
    try {
      let buffer = Buffer.alloc(0);
      for (;;) {
        const chunk = Buffer.alloc(Math.min(chunkBytes, maxBytes - buffer.length));
        const { bytesRead } =
          chunk.length === 0 ? { bytesRead: 0 } : await handle.read(chunk, 0, chunk.length, buffer.length);
        buffer = Buffer.concat([buffer, chunk.subarray(0, bytesRead)]);
        const atEof = bytesRead === 0 && buffer.length < maxBytes;
        const end = closingLineEnd(buffer, atEof);
        if (end !== -1) return { text: buffer.subarray(0, end).toString('utf8'), complete: true };
        if (atEof) return { text: buffer.toString('utf8'), complete: true };
        if (buffer.length >= maxBytes) return { text: buffer.toString('utf8'), complete: false };
      }
    } finally {
      await handle.close();
    }
  },

  async readFile(file, root, maxBytes) {
    const realRoot = await fsp.realpath(root);
    const real = await fsp.realpath(file);
    const name = path.relative(root, file).split(path.sep).join('/');
    if (!isInside(realRoot, real)) throw new OutsideSkillFolderError(`${name} leads outside the skill folder`);
    const handle = await fsp.open(real, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw new OutsideSkillFolderError(`${name} is not a regular file`);
      if (stat.size > maxBytes) throw new FileTooLargeError(`${name} is ${stat.size} bytes; the limit is ${maxBytes}`);
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  },
};
