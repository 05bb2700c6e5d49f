import { sidecarFileName, skillFileName, subskillFolder } from './problems';

export const maxResourcePathLength = 512;

export type ResourcePathCheck = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Checks a path the model asked for before anything touches a disk. Only plain relative paths pass: no absolute
 * or drive paths, no backslashes, no `.` or `..` segments, no percent-encoding, no control characters. Whether the
 * file is a resource of the skill is a separate, exact lookup in the list made at registry time.
 */
export function checkResourcePath(raw: string): ResourcePathCheck {
  const refuse = (reason: string): ResourcePathCheck => ({ ok: false, reason });
  if (raw.length === 0) return refuse('the path is empty');
  if (raw.length > maxResourcePathLength) return refuse(`the path is longer than ${maxResourcePathLength} characters`);
  if (/[\u0000-\u001F\u007F]/.test(raw)) return refuse('the path contains control characters');
  if (raw.includes('\\')) return refuse('backslashes are not allowed; separate folders with /');
  if (/%[0-9A-Fa-f]{2}/.test(raw))
    return refuse('percent-encoded paths are not accepted; give the path exactly as listed');
  if (
    raw.startsWith('/') ||
    raw.startsWith('~') ||
    /^[A-Za-z]:/.test(raw) ||
    /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(raw)
  ) {
    return refuse('absolute paths are not allowed; give the path relative to the skill folder');
  }
  const path = raw.startsWith('./') ? raw.slice(2) : raw;
  const segments = path.split('/');
  if (segments.some((s) => s === '..'))
    return refuse('".." is not allowed; only files inside the skill folder can be read');
  if (segments.some((s) => s === '' || s === '.')) return refuse('the path has an empty or "." segment');
  return { ok: true, path };
}

/** Why a path inside the skill folder is not served by read_file, when it is one of the engine's own files. */
export function reservedPathReason(path: string): string | null {
  if (path === skillFileName) return 'SKILL.md is the skill body itself: it comes through load_skill';
  if (path === sidecarFileName) return `${sidecarFileName} is engine configuration, not a resource`;
  if (path === subskillFolder || path.startsWith(`${subskillFolder}/`)) {
    return 'subskill files are not resources: load them with load_subskill when the skill says to';
  }
  return null;
}
