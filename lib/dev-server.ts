import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { searchAttributeNames } from '../core/search-attributes';
import type { TemporalConnectionOptions } from './temporal-connection';

export interface DevServerOptions {
  cli: string;
  /** host:port the frontend listens on. */
  address: string;
  namespace: string;
  /** SQLite file; absent keeps everything in memory (tests). */
  dbFile?: string;
  /** Absent runs headless. */
  uiPort?: number;
  /** The remote codec the UI calls to decode payloads (`--ui-codec-endpoint`): skillflow's codec, for operators. */
  uiCodecEndpoint?: string;
  logFile: string;
  /** `--dynamic-config-value` settings, e.g. a small continue-as-new suggestion for tests. */
  dynamicConfig?: Record<string, string | number | boolean>;
  /** Aborted while the server starts: it is stopped, and the start rejects with the signal's reason. */
  signal?: AbortSignal;
}

/**
 * Dynamic config every dev server skillflow starts gets (options can override): eager activity dispatch, so the model
 * call a workflow task schedules comes back to the worker in the task's completion instead of through a poll of the
 * activity queue (docs/benchmarks.md measures what it saves a round). The compose deployment's Temporal sets the same
 * (deploy/temporal/dynamicconfig/skillflow.yaml).
 */
export const devServerDynamicConfig: Readonly<Record<string, string | number | boolean>> = {
  'system.enableActivityEagerExecution': true,
};

export interface DevServer {
  address: string;
  uiUrl?: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

export function splitAddress(address: string): { host: string; port: number } {
  const at = address.lastIndexOf(':');
  return { host: address.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(address.slice(at + 1)) };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** True when a Temporal frontend answers at the address (or with the connection options: TLS, an API key). */
export async function temporalAnswers(target: string | TemporalConnectionOptions, timeoutMs = 1500): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({
      ...(typeof target === 'string' ? { address: target } : target),
      connectTimeout: timeoutMs,
    });
    await connection.workflowService.getSystemInfo({});
    return true;
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const { host, port } = splitAddress(options.address);
  const args = [
    'server',
    'start-dev',
    '--ip',
    host,
    '--port',
    String(port),
    '--namespace',
    options.namespace,
    '--log-level',
    'warn',
  ];
  if (options.dbFile) {
    fs.mkdirSync(path.dirname(options.dbFile), { recursive: true });
    args.push(
      '--db-filename',
      options.dbFile,
      '--sqlite-pragma',
      'journal_mode=WAL',
      '--sqlite-pragma',
      'synchronous=NORMAL',
    );
  }
  if (options.uiPort === undefined) args.push('--headless');
  else args.push('--ui-ip', host, '--ui-port', String(options.uiPort));
  if (options.uiPort !== undefined && options.uiCodecEndpoint)
    args.push('--ui-codec-endpoint', options.uiCodecEndpoint);
  for (const name of searchAttributeNames) args.push('--search-attribute', `${name}=Keyword`);
  for (const [key, value] of Object.entries({ ...devServerDynamicConfig, ...options.dynamicConfig }))
    args.push('--dynamic-config-value', `${key}=${value}`);

  fs.mkdirSync(path.dirname(options.logFile), { recursive: true });
  const log = fs.openSync(options.logFile, 'a');
  const child = spawn(options.cli, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);

  let exited: string | undefined;
  const exitedPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = `exited with ${signal ?? `code ${code}`}`;
      resolve();
    });
  });
  const stop = async () => {
    if (exited) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exitedPromise;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 120_000;
  while (!(await temporalAnswers(options.address))) {
    if (options.signal?.aborted) {
      await stop();
      throw options.signal.reason;
    }
    if (exited || Date.now() > deadline) {
      child.kill('SIGKILL');
      const tail = fs.readFileSync(options.logFile, 'utf8').split('\n').slice(-20).join('\n');
      throw new Error(
        `The Temporal dev server ${exited ?? 'did not answer within 120 s'}. Log (${options.logFile}):\n${tail}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    address: options.address,
    uiUrl:
      options.uiPort === undefined ? undefined : `http://${host === '0.0.0.0' ? 'localhost' : host}:${options.uiPort}`,
    process: child,
    stop,
  };
}

const keyword = temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD;

/** What ensureNamespaceSetup found and did, for `npm start` to say. */
export interface NamespaceSetup {
  /** Search attributes skillflow needs that were missing, now registered. */
  addedSearchAttributes: string[];
  /** The namespace's retention in days before, and after (equal when kept or already right). */
  retentionDays: { before: number; after: number };
}

/**
 * Registers the search attributes skillflow needs (it cannot show runs without them) and, with `retention: 'apply'`,
 * sets the namespace's retention; `'keep'` leaves a server's retention as its operator set it. Idempotent.
 */
export async function ensureNamespaceSetup(
  connection: Connection,
  namespace: string,
  retentionDays: number,
  retention: 'apply' | 'keep',
): Promise<NamespaceSetup> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = searchAttributeNames.filter((name) => !(name in (existing.customAttributes ?? {})));
  if (missing.length > 0) {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((name) => [name, keyword])),
    });
  }
  const described = await connection.workflowService.describeNamespace({ namespace });
  const before = Number(described.config?.workflowExecutionRetentionTtl?.seconds ?? 0) / 86_400;
  if (retention === 'apply' && before !== retentionDays) {
    await connection.workflowService.updateNamespace({
      namespace,
      config: { workflowExecutionRetentionTtl: msToTs(retentionDays * 86_400_000) },
    });
    return { addedSearchAttributes: missing, retentionDays: { before, after: retentionDays } };
  }
  return { addedSearchAttributes: missing, retentionDays: { before, after: before } };
}

/** What `npm start` did, or left alone, on a Temporal server it did not start: nothing changes there unsaid. */
export function foreignServerChanges(
  setup: NamespaceSetup,
  address: string,
  namespace: string,
  retentionDays: number,
): string[] {
  const lines: string[] = [];
  const where = `namespace ${namespace} at ${address}`;
  if (setup.addedSearchAttributes.length > 0) {
    lines.push(
      `Registered the search attributes skillflow needs on ${where}: ${setup.addedSearchAttributes.join(', ')} (Keyword).`,
    );
  }
  if (setup.retentionDays.before !== retentionDays) {
    lines.push(
      `Left the retention of ${where} at ${setup.retentionDays.before} days (SKILLFLOW_RETENTION_DAYS=${retentionDays} applies to the dev server npm start runs). ` +
        `To change it: temporal operator namespace update --namespace ${namespace} --retention ${retentionDays * 24}h`,
    );
  }
  return lines;
}
