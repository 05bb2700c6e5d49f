const unitMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export const durationFix = 'write a duration such as "90s", "30m", "2h" or "1h30m".';

/** The shape of a duration, as a regular expression source (also in skillflow.yaml's JSON Schema). */
export const durationPattern = '^([0-9]+(ms|s|m|h|d))+$';

/** `"1h30m"` -> 5400000; null when the text is not a duration or is zero. */
export function parseDuration(text: unknown): number | null {
  if (typeof text !== 'string' || !new RegExp(durationPattern).test(text)) return null;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(amount) * unitMs[unit];
  return total > 0 && Number.isSafeInteger(total) ? total : null;
}

/** 5400000 -> "1h30m"; the inverse of parseDuration for whole units. */
export function formatDuration(ms: number): string {
  const parts: string[] = [];
  let rest = ms;
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const amount = Math.floor(rest / unitMs[unit]);
    if (amount > 0) parts.push(`${amount}${unit}`);
    rest -= amount * unitMs[unit];
  }
  if (rest > 0 || parts.length === 0) parts.push(`${rest}ms`);
  return parts.join('');
}
