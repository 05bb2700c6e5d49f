import type Redis from 'ioredis';

/**
 * Closes an ioredis client without waiting on a Redis that is not there: `quit()` when connected (bounded by
 * `timeoutMs`), an immediate disconnect otherwise. A plain `quit()` on a client that is reconnecting waits for the
 * connection it will never get.
 */
export async function closeRedis(client: Redis, timeoutMs = 1_000): Promise<void> {
  if (client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect(false);
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => {
    timer = setTimeout(() => resolve('expired'), timeoutMs);
  });
  const outcome = await Promise.race([
    client.quit().then(
      () => 'quit' as const,
      () => 'failed' as const,
    ),
    expired,
  ]);
  clearTimeout(timer);
  if (outcome !== 'quit') client.disconnect(false);
}
