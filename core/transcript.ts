import type { ChatMessage } from './messages';

/**
 * Keeps the conversation out of workflow history: a model call sends only the messages added since the previous
 * call, with the count and digest of what the worker should already hold. A worker that does not hold it answers
 * TranscriptMiss and the turn sends the whole conversation once.
 */
export interface TranscriptDelta {
  baseCount: number;
  baseDigest: string;
  append: ChatMessage[];
}

export const transcriptMissType = 'TranscriptMiss';

/** A deterministic 64-bit FNV-1a digest of the JSON text (two 32-bit lanes), as 16 hex digits. */
export function digestOf(value: unknown): string {
  const text = JSON.stringify(value);
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    a = Math.imul(a ^ code, 0x01000193);
    b = Math.imul(b ^ code, 0x5bd1e995) ^ (b >>> 15);
  }
  return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}
