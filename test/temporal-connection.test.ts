import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../lib/config';
import { freePort } from '../lib/dev-server';
import { temporalStartPlan, type TemporalProfile } from '../lib/temporal-connection';

const repoRoot = path.resolve(__dirname, '..');
let dir: string;

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'skillflow-temporal-profile-'));
  for (const name of ['ca.pem', 'client.pem', 'client.key'])
    fs.writeFileSync(path.join(dir, name), `-----BEGIN ${name}-----\n`);
  fs.writeFileSync(
    path.join(dir, 'temporal.toml'),
    [
      '[profile.default]',
      'address = "default.example:7233"',
      '',
      '[profile.cloud]',
      'address = "my-ns.a1b2c.tmprl.cloud:7233"',
      'namespace = "my-ns.a1b2c"',
      '[profile.cloud.tls]',
      `client_cert_path = "${path.join(dir, 'client.pem')}"`,
      `client_key_path = "${path.join(dir, 'client.key')}"`,
      '',
      '[profile.broken]',
      'address = "broken.example:7233"',
      '[profile.broken.tls]',
      `server_ca_cert_path = "${path.join(dir, 'missing-ca.pem')}"`,
      '',
    ].join('\n'),
  );
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const text = (data: Uint8Array | undefined) => (data === undefined ? undefined : Buffer.from(data).toString('utf8'));
const configError = (env: Record<string, string>) => {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('loadConfig accepted the configuration');
};

describe('Temporal connection settings', () => {
  it('takes TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE alone as a plain connection, as before', () => {
    const config = loadConfig({ TEMPORAL_ADDRESS: 'temporal.internal:7233', TEMPORAL_NAMESPACE: 'prod' });
    expect(config.temporal.connection).toEqual({ address: 'temporal.internal:7233' });
    expect(config.temporalAddress).toBe('temporal.internal:7233');
    expect(config.temporalNamespace).toBe('prod');
    expect(config.redisPrefix).toBe('skillflow:prod:');
    expect(loadConfig({}).temporal).toMatchObject({ connection: { address: 'localhost:7233' }, namespace: 'default' });
  });

  it('reads a TOML profile named by TEMPORAL_PROFILE from TEMPORAL_CONFIG_FILE, with its TLS files', () => {
    const config = loadConfig({ TEMPORAL_CONFIG_FILE: path.join(dir, 'temporal.toml'), TEMPORAL_PROFILE: 'cloud' });
    expect(config.temporalAddress).toBe('my-ns.a1b2c.tmprl.cloud:7233');
    expect(config.temporalNamespace).toBe('my-ns.a1b2c');
    const tls = config.temporal.connection.tls;
    if (typeof tls !== 'object') throw new Error(`expected a TLS configuration, got ${String(tls)}`);
    expect(text(tls.clientCertPair?.crt)).toBe('-----BEGIN client.pem-----\n');
    expect(text(tls.clientCertPair?.key)).toBe('-----BEGIN client.key-----\n');
    expect(config.temporal.source).toContain('profile "cloud"');
  });

  it("uses the file's default profile without TEMPORAL_PROFILE, and variables override the profile", () => {
    const file = path.join(dir, 'temporal.toml');
    expect(loadConfig({ TEMPORAL_CONFIG_FILE: file }).temporalAddress).toBe('default.example:7233');
    expect(
      loadConfig({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'cloud', TEMPORAL_NAMESPACE: 'other' })
        .temporalNamespace,
    ).toBe('other');
  });

  it('finds the default file under XDG_CONFIG_HOME', () => {
    const xdg = path.join(dir, 'xdg');
    fs.mkdirSync(path.join(xdg, 'temporalio'), { recursive: true });
    fs.copyFileSync(path.join(dir, 'temporal.toml'), path.join(xdg, 'temporalio', 'temporal.toml'));
    expect(loadConfig({ XDG_CONFIG_HOME: xdg }).temporalAddress).toBe('default.example:7233');
  });

  it('sends an API key over TLS (Temporal Cloud)', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: 'us-east-1.aws.api.temporal.io:7233',
      TEMPORAL_NAMESPACE: 'my-ns.a1b2c',
      TEMPORAL_API_KEY: 'secret-key',
    });
    expect(config.temporal.connection).toEqual({
      address: 'us-east-1.aws.api.temporal.io:7233',
      apiKey: 'secret-key',
      tls: true,
    });
  });

  it('takes TLS files from TEMPORAL_TLS_* variables, and gRPC metadata from TEMPORAL_GRPC_META_*', () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal',
      TEMPORAL_GRPC_META_X_TENANT: 'blue',
    });
    const tls = config.temporal.connection.tls;
    if (typeof tls !== 'object') throw new Error(`expected a TLS configuration, got ${String(tls)}`);
    expect(text(tls.serverRootCACertificate)).toBe('-----BEGIN ca.pem-----\n');
    expect(text(tls.clientCertPair?.crt)).toBe('-----BEGIN client.pem-----\n');
    expect(tls.serverNameOverride).toBe('temporal');
    expect(config.temporal.connection.metadata).toEqual({ 'x-tenant': 'blue' });
  });

  it('names the variable and the path of a TLS file it cannot read', () => {
    const missing = path.join(dir, 'nope.pem');
    const message = configError({
      TEMPORAL_TLS_CLIENT_CERT_PATH: missing,
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
    });
    expect(message).toContain(`TEMPORAL_TLS_CLIENT_CERT_PATH=${JSON.stringify(missing)}: cannot read the file`);
  });

  it('names the profile key and file of a TLS file it cannot read, a missing profile, and a missing file', () => {
    const file = path.join(dir, 'temporal.toml');
    expect(configError({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'broken' })).toContain(
      `tls.server_ca_cert_path of profile "broken" in ${file}=${JSON.stringify(path.join(dir, 'missing-ca.pem'))}`,
    );
    expect(configError({ TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' })).toContain(
      `Profile 'staging' not found`,
    );
    expect(configError({ TEMPORAL_CONFIG_FILE: path.join(dir, 'none.toml') })).toContain('TEMPORAL_CONFIG_FILE=');
  });

  it('refuses a client certificate without its key', () => {
    expect(configError({ TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem') })).toContain('needs its key');
  });
});

describe('npm start and the configured Temporal server', () => {
  const profile = (env: Record<string, string>): TemporalProfile => loadConfig(env).temporal;

  it.each([
    ['a plain local address that answers', {}, true, 'use-running'],
    ['a plain local address that does not answer', {}, false, 'start-dev-server'],
    ['an API key', { TEMPORAL_API_KEY: 'k' }, false, 'unreachable'],
    ['TLS', { TEMPORAL_TLS: 'true' }, false, 'unreachable'],
    ['a remote plain address', { TEMPORAL_ADDRESS: 'temporal.internal:7233' }, false, 'unreachable'],
    ['an API key that answers', { TEMPORAL_API_KEY: 'k' }, true, 'use-running'],
  ] as const)('%s: %s', (_name, env, answers, kind) => {
    expect(temporalStartPlan(profile(env), answers).kind).toBe(kind);
  });

  it('stops with the reason, and starts no dev server, when a TLS/API-key profile does not answer', async () => {
    const port = await freePort();
    const data = fs.mkdtempSync(path.join(dir, 'data-'));
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      SKILLFLOW_DATA_DIR: data,
      SKILLFLOW_CACHE_DIR: path.join(data, 'cache'),
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: repoRoot,
      env: { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}`, TEMPORAL_API_KEY: 'secret-key' },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    const outcome = await new Promise<string>((resolve) => {
      const timer = setTimeout(() => resolve('no exit within 20 s'), 20_000);
      const take = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Starting the Temporal dev server|Building the Temporal CLI|Temporal CLI/.test(output)) {
          clearTimeout(timer);
          resolve('it went on to start a dev server');
        }
      };
      child.stdout.on('data', take);
      child.stderr.on('data', take);
      child.once('exit', (code) => {
        clearTimeout(timer);
        resolve(`exit ${code}`);
      });
    });
    if (child.exitCode === null && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    expect({ outcome, output }).toEqual({
      outcome: 'exit 1',
      output: expect.stringContaining(`Cannot reach the configured Temporal server at 127.0.0.1:${port}`),
    });
    expect(output).not.toContain('dev server (');
  }, 30_000);
});
