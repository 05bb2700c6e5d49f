import { parseDuration } from '../core/skills/durations';
import { closest } from '../core/skills/problems';

export type Env = Record<string, string | undefined>;

const settingPrefix = 'SKILLFLOW_';

/**
 * Reads settings from an environment: each reader returns the value, or its fallback after noting a problem that says
 * what is wrong and how to fix it, so every bad value is reported together. Remembers the names it read, so a
 * SKILLFLOW_* variable nothing reads can be reported as a likely typo.
 */
export class SettingsReader {
  readonly problems: string[] = [];
  private readonly read: Set<string>;

  constructor(
    readonly env: Env,
    readElsewhere: readonly string[],
  ) {
    this.read = new Set(readElsewhere);
  }

  /** The trimmed value; unset or blank: undefined. */
  optional = (name: string): string | undefined => {
    this.read.add(name);
    const value = this.env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };

  text(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  integer(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      this.problems.push(
        `${name}=${JSON.stringify(raw)} is not a whole number from ${min} to ${max}; unset it to use ${fallback}.`,
      );
      return fallback;
    }
    return value;
  }

  fraction(name: string, fallback: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!(value > 0 && value <= 1)) {
      this.problems.push(
        `${name}=${JSON.stringify(raw)} must be a number above 0 and at most 1; unset it to use ${fallback}.`,
      );
      return fallback;
    }
    return value;
  }

  /** Milliseconds, or a duration with units: 90s, 15m, 24h, 1h30m. */
  duration(name: string, fallback: number, min: number, max: number): number {
    const raw = this.optional(name);
    if (raw === undefined) return fallback;
    const value = /^\d+$/.test(raw) ? Number(raw) : (parseDuration(raw) ?? NaN);
    if (!Number.isSafeInteger(value) || value < min || value > max) {
      this.problems.push(
        `${name}=${JSON.stringify(raw)} is not a duration from ${formatMs(min)} to ${formatMs(max)}: write milliseconds (${fallback}) or a ` +
          `duration such as 90s, 15m, 24h, 1h30m; unset it to use ${formatMs(fallback)}.`,
      );
      return fallback;
    }
    return value;
  }

  /** A port to listen on; 0 (the default): off. */
  port(name: string): number {
    return this.integer(name, 0, 0, 65535);
  }

  /** An uppercase word from a list (given in any case). */
  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.text(name, fallback).toUpperCase();
    if ((allowed as readonly string[]).includes(value)) return value as T;
    this.problems.push(`${name}=${JSON.stringify(this.env[name])} must be one of ${allowed.join(', ')}.`);
    return fallback;
  }

  /** A lowercase word from a list, or unset. */
  optionalOneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const value = this.optional(name)?.toLowerCase();
    if (value === undefined || (allowed as readonly string[]).includes(value)) return value as T | undefined;
    this.problems.push(`${name}=${JSON.stringify(this.env[name])} must be one of ${allowed.join(', ')}, or unset.`);
    return undefined;
  }

  /** An http(s) URL without trailing slashes, or unset. */
  url(name: string, unsetMeans = 'unset it to use the Anthropic API'): string | undefined {
    const value = this.optional(name);
    if (value === undefined) return undefined;
    try {
      const parsed = new URL(value);
      if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('protocol');
      return value.replace(/\/+$/, '');
    } catch {
      this.problems.push(`${name}=${JSON.stringify(value)} is not an http(s) URL; ${unsetMeans}.`);
      return undefined;
    }
  }

  /** A SKILLFLOW_* variable nothing reads is almost always a typo (SKILLFLOW_MAX_ROUND): say so, with the likely name. */
  unreadSettings(): string[] {
    const names = [...this.read];
    const lowered = names.map((name) => name.toLowerCase());
    return Object.keys(this.env)
      .filter(
        (name) => name.startsWith(settingPrefix) && !name.startsWith(`${settingPrefix}TEST_`) && !this.read.has(name),
      )
      .sort()
      .map((name) => {
        const match = closest(name, lowered);
        const near = match === null ? null : names[lowered.indexOf(match)];
        return `${name} is set but skillflow reads no such variable; ${near ? `did you mean ${near}?` : 'see .env.example for the settings.'}`;
      });
  }
}

function formatMs(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
