/** A signal that aborts at a deadline or with any of its sources; `clear` stops the timer and lets go of the sources. */
export interface DeadlineSignal {
  signal: AbortSignal;
  clear(): void;
}

/**
 * Aborts after `ms` (reason: a TimeoutError DOMException, as AbortSignal.timeout's) or as soon as one of `sources`
 * aborts (with its reason). Its timer holds the signal strongly: AbortSignal.timeout's timer holds its signal only
 * weakly, so inside AbortSignal.any, which holds its sources weakly too, garbage collection can drop the timeout and it
 * never fires (nodejs/node#57736, Node 20). Call `clear` when the work ends; until then the timer keeps the process up.
 */
export function deadlineSignal(ms: number, sources: AbortSignal[] = []): DeadlineSignal {
  const controller = new AbortController();
  const followers = sources.map((source) => ({ source, onAbort: () => controller.abort(source.reason) }));
  const timer = setTimeout(
    () => controller.abort(new DOMException(`The deadline of ${ms} ms passed.`, 'TimeoutError')),
    ms,
  );
  const clear = () => {
    clearTimeout(timer);
    for (const { source, onAbort } of followers) source.removeEventListener('abort', onAbort);
  };
  controller.signal.addEventListener('abort', clear, { once: true });
  for (const { source, onAbort } of followers) source.addEventListener('abort', onAbort, { once: true });
  followers.find(({ source }) => source.aborted)?.onAbort();
  return { signal: controller.signal, clear };
}
