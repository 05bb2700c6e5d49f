import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import Redis from 'ioredis';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  InProcessChannel,
  liveSocketPath,
  LiveSocketInUseError,
  RedisChannel,
  SocketBroker,
  SocketPublisher,
  type LiveEvent,
} from '../lib/live';
import { LatestStates } from '../lib/live/latest-states';
import { zeroUsage } from '../core/model';
import type { TurnStatus } from '../core/turn';
import type { TurnSnapshot } from '../core/turn-snapshot';
import { maxFrameBytes } from '../lib/live/frames';
import { eventually } from './support/api';
import { freePort } from '../lib/dev-server';
import { startRedisServer, type RedisServer } from './support/redis-server';
import { killRedisConnection, requireRedis, testRedisUrl, uniqueRedisPrefix } from './support/services';

const delta = (text: string, attempt = 1): LiveEvent => ({ type: 'message.delta', text, call: '1', attempt });
const snapshot = (offset: number, status: TurnStatus = 'running', output?: string): TurnSnapshot => ({
  offset,
  state: {
    turnId: 'turn-x',
    sessionId: 's',
    userId: 'u',
    status,
    usage: zeroUsage(),
    modelCalls: 0,
    pendingCheckpoint: null,
    skill: null,
    step: null,
    remaining: [],
    createdAt: '',
    updatedAt: '',
    ...(output ? { output } : {}),
  },
});
/** A snapshot of the turn's workflow run `runId` (a reset turn goes on in a new run, its log from the reset point). */
const ofRun = (runId: string, offset: number, output: string): TurnSnapshot => ({
  ...snapshot(offset, 'waiting', output),
  runId,
});

/** A delta's text, `log@N` for a log hint, `event@N` for a pushed log event. */
const label = (event: LiveEvent): string =>
  event.type === 'log.appended'
    ? `log@${event.offset}`
    : event.type === 'log.event'
      ? `event@${event.event.offset}`
      : event.text;

/** The live channel on its own, without Temporal: fan-out, the local socket's robustness, and Redis. */
describe('live channel', () => {
  describe('in process', () => {
    it("delivers to the turn's listeners only, until they unsubscribe; a throwing listener harms no one", () => {
      const channel = new InProcessChannel();
      const seen: string[] = [];
      const off = channel.subscribe('turn-a', (event) => seen.push(`a:${label(event)}`));
      channel.subscribe('turn-a', () => {
        throw new Error('broken listener');
      });
      channel.subscribe('turn-b', (event) => seen.push(`b:${label(event)}`));
      channel.publish('turn-a', delta('1'));
      channel.publish('turn-c', delta('nobody'));
      off();
      channel.publish('turn-a', delta('2'));
      channel.publish('turn-b', delta('3'));
      expect(seen).toEqual(['a:1', 'b:3']);
    });
  });

  describe('turn states', () => {
    it('keep the latest snapshot by offset (a later write of the same offset wins), forget ended turns, and stay bounded', async () => {
      const channel = new InProcessChannel();
      channel.publishState('turn-x', snapshot(3, 'running', 'a'));
      channel.publishState('turn-x', snapshot(2, 'running', 'older'));
      expect((await channel.latestState('turn-x'))?.state.output).toBe('a');
      channel.publishState('turn-x', snapshot(3, 'waiting', 'b'));
      expect(await channel.latestState('turn-x')).toMatchObject({
        offset: 3,
        state: { status: 'waiting', output: 'b' },
      });
      channel.publishState('turn-x', snapshot(4, 'completed'));
      expect(await channel.latestState('turn-x')).toBeUndefined();
      // A turn reset in Temporal: its new run writes its log again from an earlier offset.
      channel.publishState('turn-y', ofRun('run-1', 9, 'run 1'));
      channel.publishState('turn-y', ofRun('run-2', 4, 'run 2'));
      expect(await channel.latestState('turn-y')).toEqual(ofRun('run-2', 4, 'run 2'));
      channel.publishState('turn-y', ofRun('run-2', 3, 'run 2, older'));
      channel.publishState('turn-y', snapshot(3, 'waiting', 'no run named: by its offset'));
      expect((await channel.latestState('turn-y'))?.state.output).toBe('run 2');
      const few = new LatestStates(2);
      for (const turn of ['a', 'b', 'c']) few.put(turn, snapshot(1));
      expect([few.get('a'), few.get('b')?.offset, few.get('c')?.offset]).toEqual([undefined, 1, 1]);
    });
  });

  describe('the local socket', () => {
    let dir: string;
    const closers: Array<{ close(): Promise<void> }> = [];
    const track = <T extends { close(): Promise<void> }>(value: T) => {
      closers.push(value);
      return value;
    };

    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-sock-'));
    });
    afterEach(async () => {
      for (const closer of closers.splice(0)) await closer.close();
    });

    it("lives in the data dir, or in a directory of this user's own in the temp dir when that path would be too long", () => {
      expect(liveSocketPath('/srv/skillflow')).toBe('/srv/skillflow/live.sock');
      const long = `/tmp/${'x'.repeat(120)}`;
      expect(liveSocketPath(long)).toMatch(
        new RegExp(`^${os.tmpdir()}/skillflow-${process.getuid!()}/live-[0-9a-f]{16}\\.sock$`),
      );
      expect(liveSocketPath(long)).toBe(liveSocketPath(`${long}/`));
      expect(liveSocketPath('/srv/skillflow', '/run/sf.sock')).toBe('/run/sf.sock');
    });

    describe('in the temp dir (issue 13.5)', () => {
      // A temp dir of this test's own: the real one's skillflow-<uid> is shared with other processes of this user.
      let tmp: string;
      beforeEach(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-tmpdir-'));
      });
      afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));
      const longDataDir = `/srv/${'x'.repeat(120)}`;

      it("the broker makes the socket's directory private (0700) and the socket 0600", async () => {
        const socketPath = liveSocketPath(longDataDir, undefined, tmp);
        expect(path.dirname(socketPath)).toBe(path.join(tmp, `skillflow-${process.getuid!()}`));
        track(await SocketBroker.listen(socketPath));
        expect((fs.statSync(path.dirname(socketPath)).mode & 0o777).toString(8)).toBe('700');
        expect((fs.statSync(socketPath).mode & 0o777).toString(8)).toBe('600');
      });

      it('a directory there that others may enter, or a symlink, is refused', async () => {
        const socketPath = liveSocketPath(longDataDir, undefined, tmp);
        fs.mkdirSync(path.dirname(socketPath), { mode: 0o777 });
        fs.chmodSync(path.dirname(socketPath), 0o777);
        await expect(SocketBroker.listen(socketPath)).rejects.toThrow(
          /must be a directory of this user .* with mode 0700; it is owned by uid \d+ with mode 777/,
        );
        fs.rmSync(path.dirname(socketPath), { recursive: true });
        fs.symlinkSync(tmp, path.dirname(socketPath));
        await expect(SocketBroker.listen(socketPath)).rejects.toThrow(/it is not a directory/);
      });
    });

    // Only root can give a socket to another user; CI and the development machines run as root.
    (process.getuid?.() === 0 ? it : it.skip)(
      'a worker does not connect to a socket another user owns (needs root)',
      async () => {
        const socketPath = path.join(dir, 'live.sock');
        const impostor = net.createServer();
        const connections: net.Socket[] = [];
        impostor.on('connection', (socket) => connections.push(socket));
        await new Promise<void>((resolve) => impostor.listen(socketPath, resolve));
        try {
          fs.chownSync(socketPath, 65534, 65534);
          const lines: string[] = [];
          const publisher = track(
            new SocketPublisher(socketPath, {
              minReconnectMs: 20,
              maxReconnectMs: 50,
              log: (line) => lines.push(line),
            }),
          );
          publisher.publish('turn-x', delta('secret'));
          await eventually(
            async () => lines,
            (logged) => logged.length > 0,
            5_000,
          );
          expect(lines[0]).toMatch(
            /not connecting: .*live\.sock belongs to uid 65534, not to this process's user \(uid 0\)/,
          );
          await new Promise((resolve) => setTimeout(resolve, 200));
          expect(publisher.isConnected).toBe(false);
          expect(connections).toHaveLength(0);
        } finally {
          for (const connection of connections) connection.destroy();
          await new Promise<void>((resolve) => impostor.close(() => resolve()));
        }
      },
    );

    it('a publisher drops events while no API listens, never throws, and connects once one does', async () => {
      const socketPath = path.join(dir, 'live.sock');
      const publisher = track(new SocketPublisher(socketPath, { minReconnectMs: 20, maxReconnectMs: 50 }));
      // Nothing is written (a socket still connecting would buffer it) and no connection is tried per event.
      const connects = jest.spyOn(net, 'connect');
      const writes = jest.spyOn(net.Socket.prototype, 'write');
      try {
        const returned = Array.from({ length: 10_000 }, () => publisher.publish('turn-x', delta('lost')));
        expect(returned.every((value) => value === undefined)).toBe(true);
        expect({ connects: connects.mock.calls.length, writes: writes.mock.calls.length }).toEqual({
          connects: 0,
          writes: 0,
        });
      } finally {
        connects.mockRestore();
        writes.mockRestore();
      }

      const broker = track(await SocketBroker.listen(socketPath));
      const seen: string[] = [];
      broker.subscribe('turn-x', (event) => seen.push(label(event)));
      await eventually(
        async () => publisher.isConnected,
        (connected) => connected,
      );
      publisher.publish('turn-x', delta('hello'));
      publisher.publish('turn-y', delta('not subscribed'));
      publisher.publish('turn-x', { type: 'log.appended', offset: 7 });
      publisher.publish('turn-x', delta('world'));
      await eventually(
        async () => seen.length,
        (count) => count === 3,
      );
      expect(seen).toEqual(['hello', 'log@7', 'world']);
    });

    it('the publisher reconnects after the broker goes away and comes back', async () => {
      const socketPath = path.join(dir, 'live.sock');
      let broker = await SocketBroker.listen(socketPath);
      const publisher = track(new SocketPublisher(socketPath, { minReconnectMs: 20, maxReconnectMs: 100 }));
      await eventually(
        async () => broker.publishers,
        (count) => count === 1,
      );
      await broker.close();
      await eventually(
        async () => publisher.isConnected,
        (connected) => !connected,
      );
      publisher.publish('turn-x', delta('while down'));

      broker = track(await SocketBroker.listen(socketPath));
      const seen: string[] = [];
      broker.subscribe('turn-x', (event) => seen.push(label(event)));
      await eventually(
        async () => broker.publishers,
        (count) => count === 1,
      );
      publisher.publish('turn-x', delta('after'));
      await eventually(
        async () => seen,
        (texts) => texts.length === 1,
      );
      expect(seen).toEqual(['after']);
    });

    it('replaces a stale socket file, but refuses one a live broker still serves', async () => {
      const socketPath = path.join(dir, 'live.sock');
      fs.writeFileSync(socketPath, '');
      const broker = track(await SocketBroker.listen(socketPath));
      await expect(SocketBroker.listen(socketPath)).rejects.toBeInstanceOf(LiveSocketInUseError);
      await eventually(
        async () => broker.publishers,
        (count) => count === 0,
      );
    });

    it('drops garbage lines and cuts off a connection that sends an endless line', async () => {
      const socketPath = path.join(dir, 'live.sock');
      const broker = track(await SocketBroker.listen(socketPath));
      const seen: string[] = [];
      broker.subscribe('turn-x', (event) => seen.push(label(event)));
      const raw = net.connect(socketPath);
      await new Promise((resolve) => raw.once('connect', resolve));
      raw.write('not json\n{"turn":"turn-x","event":{"type":"message.delta","text":1}}\n');
      raw.write(`${JSON.stringify({ turn: 'turn-x', event: delta('valid') })}\n`);
      await eventually(
        async () => seen.length,
        (count) => count === 1,
      );
      const closed = new Promise((resolve) => raw.once('close', resolve));
      raw.on('error', () => undefined);
      raw.write('x'.repeat(300 * 1024));
      await closed;
      expect(seen).toEqual(['valid']);
    });

    it('carries turn states to the broker, which keeps them for reads; one too large for a frame makes it forget', async () => {
      const socketPath = path.join(dir, 'live.sock');
      const broker = track(await SocketBroker.listen(socketPath));
      const publisher = track(new SocketPublisher(socketPath));
      await eventually(
        async () => publisher.isConnected,
        (connected) => connected,
      );
      publisher.publishState('turn-x', snapshot(5, 'waiting'));
      await eventually(
        () => broker.latestState('turn-x'),
        (kept) => kept?.offset === 5,
      );
      publisher.publishState('turn-x', snapshot(6, 'running', 'x'.repeat(maxFrameBytes)));
      await eventually(
        () => broker.latestState('turn-x'),
        (kept) => kept === undefined,
      );
      expect(await publisher.latestState()).toBeUndefined();
    });

    it('sheds events instead of buffering when the socket backs up', async () => {
      const socketPath = path.join(dir, 'live.sock');
      const broker = track(await SocketBroker.listen(socketPath));
      let received = 0;
      broker.subscribe('turn-x', () => (received += 1));
      const publisher = track(new SocketPublisher(socketPath, { maxBufferedBytes: 1024 }));
      await eventually(
        async () => publisher.isConnected,
        (connected) => connected,
      );
      const big = delta('y'.repeat(64 * 1024));
      for (let i = 0; i < 1_000; i += 1) publisher.publish('turn-x', big);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(received).toBeGreaterThan(0);
      expect(received).toBeLessThan(1_000);
      expect(publisher.isConnected).toBe(true);
    });
  });

  describe('Redis pub/sub (the running service, or SKILLFLOW_TEST_REDIS_URL)', () => {
    beforeAll(async () => {
      await requireRedis();
    });

    it('fans out by turn between two channels; unsubscribing stops delivery', async () => {
      const prefix = uniqueRedisPrefix('live');
      const api = new RedisChannel(testRedisUrl(), { prefix });
      const worker = new RedisChannel(testRedisUrl(), { prefix });
      const other = new RedisChannel(testRedisUrl(), { prefix: `${prefix}other:` });
      try {
        const seen: string[] = [];
        const off = api.subscribe('turn-x', (event) => seen.push(label(event)));
        await new Promise((resolve) => setTimeout(resolve, 200));
        worker.publish('turn-x', delta('one'));
        worker.publish('turn-y', delta('other turn'));
        other.publish('turn-x', delta('other deployment'));
        await eventually(
          async () => seen.length,
          (count) => count === 1,
        );
        off();
        await new Promise((resolve) => setTimeout(resolve, 100));
        worker.publish('turn-x', delta('after unsubscribe'));
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(seen).toEqual(['one']);
      } finally {
        await Promise.all([api.close(), worker.close(), other.close()]);
      }
    });

    it('subscribed() settles once Redis confirmed the subscription: an event published right then arrives', async () => {
      const prefix = uniqueRedisPrefix('ready');
      const api = new RedisChannel(testRedisUrl(), { prefix });
      const worker = new RedisChannel(testRedisUrl(), { prefix });
      try {
        // Both connections up: a turn of its own gets an event through.
        const warm: string[] = [];
        api.subscribe('turn-warm', (event) => warm.push(label(event)));
        await eventually(
          async () => {
            worker.publish('turn-warm', delta('warm'));
            return warm.length;
          },
          (count) => count > 0,
        );
        const seen: string[] = [];
        api.subscribe('turn-x', (event) => seen.push(label(event)));
        await api.subscribed('turn-x');
        worker.publish('turn-x', delta('right away'));
        await eventually(
          async () => seen,
          (events) => events.length === 1,
          5_000,
        );
        expect(seen).toEqual(['right away']);
      } finally {
        await Promise.all([api.close(), worker.close()]);
      }
    });

    it("keeps a turn's latest state under the prefix, never replacing it with an older one", async () => {
      const prefix = uniqueRedisPrefix('state');
      const api = new RedisChannel(testRedisUrl(), { prefix });
      const worker = new RedisChannel(testRedisUrl(), { prefix });
      const other = new RedisChannel(testRedisUrl(), { prefix: `${prefix}other:` });
      try {
        // Until the worker's connection is up, states are dropped (never queued): write until one lands.
        await eventually(
          async () => {
            worker.publishState('turn-x', snapshot(10, 'waiting', 'ten'));
            return api.latestState('turn-x');
          },
          (kept) => kept?.offset === 10,
        );
        worker.publishState('turn-x', snapshot(9, 'running', 'nine'));
        // A mark written after it on the same connection: once it is there, Redis has run the older write.
        worker.publishState('turn-mark', snapshot(1, 'running', 'after nine'));
        await eventually(
          () => api.latestState('turn-mark'),
          (kept) => kept?.state.output === 'after nine',
        );
        expect((await api.latestState('turn-x'))?.state.output).toBe('ten');
        worker.publishState('turn-x', snapshot(10, 'running', 'ten again'));
        await eventually(
          () => api.latestState('turn-x'),
          (kept) => kept?.state.output === 'ten again',
        );
        expect(await other.latestState('turn-x')).toBeUndefined();
      } finally {
        await Promise.all([api.close(), worker.close(), other.close()]);
      }
    });

    it("replaces a turn's state with another run's at any offset (a reset turn), and reads and orders states that name no run", async () => {
      const prefix = uniqueRedisPrefix('state-runs');
      const api = new RedisChannel(testRedisUrl(), { prefix });
      const worker = new RedisChannel(testRedisUrl(), { prefix });
      const raw = new Redis(testRedisUrl());
      let marks = 0;
      /** Writes a mark after what the worker published, and waits for it: Redis ran the worker's writes before it. */
      const settled = async () => {
        const mark = `mark ${(marks += 1)}`;
        worker.publishState('turn-mark', snapshot(marks, 'running', mark));
        await eventually(
          () => api.latestState('turn-mark'),
          (kept) => kept?.state.output === mark,
          5_000,
        );
      };
      const kept = () => api.latestState('turn-x');
      try {
        // Until the worker's connection is up, states are dropped (never queued).
        await eventually(
          async () => (worker.publishState('turn-mark', snapshot(0)), api.latestState('turn-mark')),
          Boolean,
        );
        // As workers wrote it before snapshots named their run.
        await raw.set(`${prefix}state:turn-x`, JSON.stringify(snapshot(10, 'waiting', 'no run')), 'EX', 600);
        expect(await kept()).toEqual(snapshot(10, 'waiting', 'no run'));
        worker.publishState('turn-x', ofRun('run-1', 9, 'run 1, older'));
        await settled();
        expect((await kept())?.state.output).toBe('no run');
        worker.publishState('turn-x', ofRun('run-1', 10, 'run 1'));
        await settled();
        expect(await kept()).toEqual(ofRun('run-1', 10, 'run 1'));

        worker.publishState('turn-x', ofRun('run-2', 3, 'run 2'));
        await settled();
        expect(await kept()).toEqual(ofRun('run-2', 3, 'run 2'));
        worker.publishState('turn-x', ofRun('run-2', 2, 'run 2, older'));
        worker.publishState('turn-x', snapshot(2, 'waiting', 'no run, older'));
        await settled();
        expect(await kept()).toEqual(ofRun('run-2', 3, 'run 2'));
      } finally {
        raw.disconnect();
        await Promise.all([api.close(), worker.close()]);
      }
    });

    it('after its connection dropped, the subscriber subscribes again and says which turns, once Redis confirmed', async () => {
      const prefix = uniqueRedisPrefix('resubscribe');
      const name = `skillflow-test-resubscribe-${randomBytes(4).toString('hex')}`;
      const api = new RedisChannel(testRedisUrl(), { prefix, name });
      const worker = new RedisChannel(testRedisUrl(), { prefix });
      try {
        const seen: string[] = [];
        api.subscribe('turn-x', (event) => seen.push(label(event)));
        const offY = api.subscribe('turn-y', () => undefined);
        const restored: string[][] = [];
        api.onResubscribed((turnIds) => restored.push(turnIds));
        await eventually(
          async () => {
            worker.publish('turn-x', delta('before'));
            return seen.length;
          },
          (count) => count > 0,
        );
        offY();
        await killRedisConnection(`${name}-subscribe`);
        await eventually(
          async () => restored,
          (calls) => calls.length > 0,
          10_000,
        );
        expect(restored).toEqual([['turn-x']]);
        // Confirmed: what is published from now on arrives.
        seen.length = 0;
        worker.publish('turn-x', delta('after'));
        await eventually(
          async () => seen,
          (events) => events.length === 1,
          5_000,
        );
        expect(seen).toEqual(['after']);
      } finally {
        await Promise.all([api.close(), worker.close()]);
      }
    });

    it('a turn followed while Redis was down since the start is subscribed once it comes up, after ioredis gave up its queued SUBSCRIBE', async () => {
      const port = await freePort();
      const prefix = uniqueRedisPrefix('late-redis');
      const api = new RedisChannel(`redis://127.0.0.1:${port}`, { prefix });
      let own: RedisServer | undefined;
      let worker: RedisChannel | undefined;
      try {
        const seen: string[] = [];
        api.subscribe('turn-x', (event) => seen.push(label(event)));
        const restored: string[][] = [];
        api.onResubscribed((turnIds) => restored.push(turnIds));
        // ioredis fails the commands it queued after 20 retries (about 10 s): the subscription settles, unconfirmed.
        await api.subscribed('turn-x');
        own = await startRedisServer(port);
        worker = new RedisChannel(own.url, { prefix });
        const published = worker;
        await eventually(
          async () => {
            published.publish('turn-x', delta('up'));
            return seen.length;
          },
          (count) => count > 0,
          15_000,
        );
        // Its feed reads the log for what was published before the subscription held.
        expect(restored).toEqual([['turn-x']]);
      } finally {
        await Promise.all([api.close(), worker?.close()]);
        await own?.stop();
      }
    });

    it('publishing while Redis is unreachable neither throws nor waits: each PUBLISH is refused at once, none queued', async () => {
      // The real ioredis client's PUBLISH, called through: what it returns is the command's own promise.
      const sent = jest.spyOn(Redis.prototype, 'publish');
      const channel = new RedisChannel('redis://127.0.0.1:1');
      try {
        const returned = Array.from({ length: 1_000 }, () => channel.publish('turn-x', delta('dropped')));
        expect(returned.every((value) => value === undefined)).toBe(true);
        expect(sent).toHaveBeenCalledTimes(1_000);
        // Refused before any I/O: only microtasks run before these checks, so a command queued for the connection
        // (an offline queue, retries) is still pending here, whatever the machine's speed.
        const outcomes = sent.mock.results.map(({ value }) => {
          const outcome = { settled: 'pending' };
          (value as Promise<unknown>).then(
            () => (outcome.settled = 'sent'),
            () => (outcome.settled = 'refused'),
          );
          return outcome;
        });
        for (let tick = 0; tick < 3; tick += 1) await Promise.resolve();
        expect(new Set(outcomes.map(({ settled }) => settled))).toEqual(new Set(['refused']));
      } finally {
        sent.mockRestore();
        await channel.close();
      }
    });

    it('closing while Redis is down returns at once, whether it went away or never answered', async () => {
      const own = await startRedisServer();
      const wentAway = new RedisChannel(own.url, { prefix: uniqueRedisPrefix('close') });
      const seen: string[] = [];
      wentAway.subscribe('turn-x', (event) => seen.push(label(event)));
      await eventually(
        async () => {
          wentAway.publish('turn-x', delta('up'));
          return seen.length;
        },
        (count) => count > 0,
      );
      await own.stop();
      const neverUp = new RedisChannel(own.url, { prefix: uniqueRedisPrefix('close') });
      neverUp.subscribe('turn-x', () => undefined);
      neverUp.publish('turn-x', delta('dropped'));
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const channel of [wentAway, neverUp]) {
        const started = Date.now();
        await channel.close();
        expect(Date.now() - started).toBeLessThan(1_000);
      }
    });
  });
});
