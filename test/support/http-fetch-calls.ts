import v8 from 'node:v8';
import vm from 'node:vm';
import type { ToolRunResult } from '../../core/tools';
import { builtinTools } from '../../lib/tools/builtin';
import type { HttpFetchOptions } from '../../lib/tools/builtin/http-fetch';
import { ToolRegistry } from '../../lib/tools/registry';
import { workerSide } from './budgeted-worker';

/**
 * A worker thread (test/support/budgeted-worker.ts) that makes http_fetch calls at once and reports each as it ends;
 * with `collectGarbageEveryMs`, it runs full garbage collections all along, as a busy worker's heap would.
 */
export interface HttpFetchCalls {
  options: Omit<HttpFetchOptions, 'resolve'>;
  urls: string[];
  collectGarbageEveryMs?: number;
}

export interface SettledCall {
  url: string;
  result: ToolRunResult;
}

function exposedGc(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  v8.setFlagsFromString('--no-expose-gc');
  return gc;
}

const side = workerSide<HttpFetchCalls>();
const { options, urls, collectGarbageEveryMs } = side.data;
const registry = new ToolRegistry(builtinTools(options));
const gc = collectGarbageEveryMs ? exposedGc() : undefined;
side.ready();
const collecting = gc ? setInterval(gc, collectGarbageEveryMs) : undefined;
const context = { attempt: 1, signal: new AbortController().signal, heartbeat: () => undefined };
void Promise.all(
  urls.map(async (url, index) => {
    const result = await registry.run({ name: 'http_fetch', input: { url }, callId: `call-${index}` }, context);
    side.progress({ url, result });
    return { url, result };
  }),
).then((settled: SettledCall[]) => {
  clearInterval(collecting);
  side.done(settled);
});
