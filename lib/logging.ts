import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger };

/**
 * The processes' structured logs: one JSON object per line on stdout, with `time` (ISO 8601), `level` as a word,
 * `service` (skillflow-api, skillflow-worker), `msg`, and the fields of the call (`requestId`, `turnId`, `err` with
 * its stack and cause chain). Tests pass a destination to read what was logged.
 */
export function createLogger(service: string, level = 'info', destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.errWithCause },
    },
    destination,
  );
}

/** How loud an operational line is: `warn` when a dependency went wrong, `info` when it is right again. */
export type OpsLevel = 'warn' | 'info';

/**
 * Operational lines about dependencies coming and going (Redis, the store). Without a level, a line is a warning. A
 * plain `(line) => void` is one too: it gets every line.
 */
export type OpsLog = (line: string, level?: OpsLevel) => void;

/** An OpsLog onto a structured logger, each line at its level. */
export const opsLogOf =
  (logger: Pick<Logger, 'warn' | 'info'>): OpsLog =>
  (line, level = 'warn') =>
    logger[level](line);
