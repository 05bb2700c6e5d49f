import Redis from 'ioredis';
import { OpenStreams } from '../api/streams/open-streams';
import { guardApiRedis } from '../api/redis';
import { SharedStreamCounts, streamPlaceTtlMs } from '../api/streams/shared-stream-counts';
import { requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';

/** Two API processes sharing Redis, each with its own OpenStreams: one user's stream cap holds across both. */
describe('stream caps across API processes sharing Redis', () => {
  const prefix = uniqueRedisPrefix('streams');
  const redis = new Redis(testRedisUrl(), { lazyConnect: true, maxRetriesPerRequest: 1 });
  const guarded = guardApiRedis(redis, () => undefined);
  let clock = 1_000_000;
  const counts: SharedStreamCounts[] = [];
  const processWith = (perUser: number) => {
    const shared = new SharedStreamCounts(
      guarded,
      prefix,
      (err) => {
        throw err;
      },
      () => clock,
    );
    counts.push(shared);
    return { streams: new OpenStreams({ perUser, total: 100 }, shared), shared };
  };
  const refused = { statusCode: 429, code: 'too_many_streams' };

  beforeAll(async () => {
    await requireRedis();
    await redis.connect();
  });
  afterAll(async () => {
    for (const shared of counts) shared.close();
    // Only this test's own keys: never a FLUSH on a shared Redis.
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    guarded.guard.close();
    await redis.quit();
  });

  it("count a user's streams on every process; a closed one frees its place, another user's are apart", async () => {
    const [one, two] = [processWith(2), processWith(2)];
    const first = await one.streams.lease('alice');
    const second = await two.streams.lease('alice');
    await expect(one.streams.lease('alice')).rejects.toMatchObject({
      ...refused,
      message: expect.stringContaining('across the API processes'),
    });
    await expect(two.streams.lease('alice')).rejects.toMatchObject(refused);
    (await two.streams.lease('bob')).release();
    first.release();
    const again = await two.streams.lease('alice');
    again.release();
    second.release();
    expect(await redis.zcard(`${prefix}streams:alice`)).toBe(0);
  });

  it('give back the places of a process that stopped renewing them once they expire; renewed ones stay', async () => {
    const [gone, alive, other] = [processWith(1), processWith(1), processWith(1)];
    await gone.streams.lease('carol');
    await alive.streams.lease('dave');
    clock += (2 * streamPlaceTtlMs) / 3;
    await alive.shared.renew();
    await expect(other.streams.lease('carol')).rejects.toMatchObject(refused);
    clock += streamPlaceTtlMs / 2;
    // gone's place expired; alive's, renewed, has not.
    (await other.streams.lease('carol')).release();
    await expect(other.streams.lease('dave')).rejects.toMatchObject(refused);
  });
});
