/** An error answer of the API (`{error: {code, message, requestId}}`), or the API not answering at all (`status` 0). */
export class SkillflowApiError extends Error {
  override name = 'SkillflowApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
    /** The answer's `retry-after` in seconds (429, 503): the same request may succeed after that long. */
    readonly retryAfterSeconds?: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
