import { createHash } from 'node:crypto';

export interface SkillFile {
  rel: string;
  bytes: Buffer;
}

/** sha256 over the skill's name and every served file (path, length, bytes), in path order. */
export function hashSkillFiles(name: string, files: SkillFile[]): string {
  const hash = createHash('sha256').update(`skillflow-skill-v1\0${name}\0`);
  for (const file of [...files].sort((a, b) => (a.rel < b.rel ? -1 : 1))) {
    hash.update(`${file.rel}\0${file.bytes.length}\0`).update(file.bytes);
  }
  return hash.digest('hex');
}
