import fs from 'node:fs';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile } from '@temporalio/envconfig';
import type { TLSConfig } from '@temporalio/common/lib/internal-non-workflow';

/** What both the worker's NativeConnection and the client's Connection take to reach Temporal. */
export interface TemporalConnectionOptions {
  address: string;
  /** Absent: plain TCP; true: TLS with the system's roots; a TLSConfig: a CA, a client certificate (mTLS), a server name. */
  tls?: TLSConfig | boolean;
  apiKey?: string;
  metadata?: Record<string, string>;
}

/** Temporal's standard client configuration, as skillflow resolved it. */
export interface TemporalProfile {
  connection: TemporalConnectionOptions;
  namespace: string;
  /** Where the settings came from, for start-up lines and errors: `profile "prod" in /path/temporal.toml`, or the environment. */
  source: string;
}

export const defaultTemporalAddress = 'localhost:7233';
export const defaultTemporalNamespace = 'default';

/** The variables of Temporal's client configuration skillflow passes to the loader (TEMPORAL_GRPC_META_* besides). */
export const temporalProfileVariables = [
  'TEMPORAL_ADDRESS',
  'TEMPORAL_NAMESPACE',
  'TEMPORAL_API_KEY',
  'TEMPORAL_TLS',
  'TEMPORAL_TLS_CLIENT_CERT_PATH',
  'TEMPORAL_TLS_CLIENT_CERT_DATA',
  'TEMPORAL_TLS_CLIENT_KEY_PATH',
  'TEMPORAL_TLS_CLIENT_KEY_DATA',
  'TEMPORAL_TLS_SERVER_CA_CERT_PATH',
  'TEMPORAL_TLS_SERVER_CA_CERT_DATA',
  'TEMPORAL_TLS_SERVER_NAME',
  'TEMPORAL_PROFILE',
  'TEMPORAL_CONFIG_FILE',
] as const;

const grpcMetaPrefix = 'TEMPORAL_GRPC_META_';

/** The TLS file settings: the variable, and the key a TOML profile's `[profile.<name>.tls]` table uses. */
const tlsFiles = [
  { variable: 'TEMPORAL_TLS_CLIENT_CERT_PATH', key: 'client_cert_path', field: 'clientCert' },
  { variable: 'TEMPORAL_TLS_CLIENT_KEY_PATH', key: 'client_key_path', field: 'clientKey' },
  { variable: 'TEMPORAL_TLS_SERVER_CA_CERT_PATH', key: 'server_ca_cert_path', field: 'serverCACert' },
] as const;

/**
 * Resolves the Temporal connection from the environment and, when there is one, a TOML profile (`TEMPORAL_CONFIG_FILE`,
 * else `$XDG_CONFIG_HOME/temporalio/temporal.toml` or `~/.config/temporalio/temporal.toml`; `TEMPORAL_PROFILE`, else
 * `default`), with `@temporalio/envconfig`: variables override the profile. `read` returns a set, non-blank variable.
 * Each problem is pushed with its fix; the result is then still usable for further validation.
 */
export function temporalProfileFrom(
  read: (name: string) => string | undefined,
  env: Record<string, string | undefined>,
  problems: string[],
): TemporalProfile {
  const vars: Record<string, string> = {};
  for (const name of temporalProfileVariables) {
    const value = read(name);
    if (value !== undefined) vars[name] = value;
  }
  for (const name of Object.keys(env)) {
    const value = env[name];
    if (name.startsWith(grpcMetaPrefix) && value !== undefined) vars[name] = value;
  }
  // Only for finding the default file; read without recording them as settings.
  for (const name of ['HOME', 'XDG_CONFIG_HOME']) {
    if (Object.hasOwn(env, name) && env[name]) vars[name] = env[name] as string;
  }
  const file = vars.TEMPORAL_CONFIG_FILE;
  if (file !== undefined && !fs.existsSync(file)) {
    problems.push(
      `TEMPORAL_CONFIG_FILE=${JSON.stringify(file)}: no such file; point it at a Temporal client TOML file, or unset it.`,
    );
    delete vars.TEMPORAL_CONFIG_FILE;
  }
  const fileName = file ?? 'the default temporal.toml';
  const profileName = vars.TEMPORAL_PROFILE ?? 'default';
  const source =
    vars.TEMPORAL_PROFILE !== undefined || file !== undefined
      ? `profile "${profileName}" in ${fileName}`
      : 'the environment';
  let profile: ClientConfigProfile = {};
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: vars });
  } catch (err) {
    problems.push(
      `Temporal client configuration (${source}): ${err instanceof Error ? err.message : String(err)}; fix the file or TEMPORAL_PROFILE.`,
    );
    profile = loadClientConfigProfile({ overrideEnvVars: vars, disableFile: true });
  }
  const tls = tlsOf(profile, vars, profileName, fileName, problems);
  const options = toClientOptions({ ...profile, tls });
  const connection: TemporalConnectionOptions = { address: profile.address ?? defaultTemporalAddress };
  if (options.connectionOptions.tls !== undefined && options.connectionOptions.tls !== null)
    connection.tls = options.connectionOptions.tls;
  if (profile.apiKey !== undefined) connection.apiKey = profile.apiKey;
  if (profile.grpcMeta !== undefined && Object.keys(profile.grpcMeta).length > 0)
    connection.metadata = profile.grpcMeta;
  return { connection, namespace: profile.namespace ?? defaultTemporalNamespace, source };
}

/** The profile's TLS settings with every file checked: a missing file names its setting and path, and is left out. */
function tlsOf(
  profile: ClientConfigProfile,
  vars: Record<string, string>,
  profileName: string,
  fileName: string,
  problems: string[],
): ClientConfigProfile['tls'] {
  if (profile.tls === undefined) return undefined;
  const tls = { ...profile.tls };
  for (const { variable, key, field } of tlsFiles) {
    const data = tls[field];
    if (data === undefined || !('path' in data)) continue;
    const setting = vars[variable] !== undefined ? variable : `tls.${key} of profile "${profileName}" in ${fileName}`;
    try {
      fs.accessSync(data.path, fs.constants.R_OK);
    } catch {
      problems.push(
        `${setting}=${JSON.stringify(data.path)}: cannot read the file; point it at a PEM file this process can read.`,
      );
      delete tls[field];
    }
  }
  if ((profile.tls.clientCert === undefined) !== (profile.tls.clientKey === undefined)) {
    problems.push(
      'A TLS client certificate needs its key and the other way round: set both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH (or their _DATA forms, or both in the profile).',
    );
  }
  return tls;
}

/** A Temporal address `npm start` may start a dev server at: no TLS, no API key, on this machine. */
export function isPlainLocalTemporal(connection: TemporalConnectionOptions): boolean {
  if (connection.apiKey !== undefined || (connection.tls !== undefined && connection.tls !== false)) return false;
  const host = connection.address
    .slice(0, connection.address.lastIndexOf(':'))
    .replace(/^\[|\]$/g, '')
    .toLowerCase();
  return (
    host === 'localhost' || host === '::1' || host === '0.0.0.0' || host === '::' || /^127\.\d+\.\d+\.\d+$/.test(host)
  );
}

/** Says how a connection authenticates, for start-up lines (no secrets). */
export function describeTemporalConnection(profile: TemporalProfile): string {
  const { connection } = profile;
  const security =
    connection.apiKey !== undefined
      ? 'TLS and an API key'
      : typeof connection.tls === 'object' && connection.tls.clientCertPair !== undefined
        ? 'mTLS'
        : connection.tls !== undefined && connection.tls !== false
          ? 'TLS'
          : 'plain TCP';
  return `${connection.address} (namespace ${profile.namespace}, ${security}, from ${profile.source})`;
}

/** What `npm start` does about Temporal: use the server that answers, start a dev server, or stop with the reason. */
export type TemporalStartPlan =
  { kind: 'use-running' } | { kind: 'start-dev-server' } | { kind: 'unreachable'; reason: string };

export function temporalStartPlan(profile: TemporalProfile, answers: boolean): TemporalStartPlan {
  if (answers) return { kind: 'use-running' };
  if (isPlainLocalTemporal(profile.connection)) return { kind: 'start-dev-server' };
  return {
    kind: 'unreachable',
    reason:
      `Cannot reach the configured Temporal server at ${describeTemporalConnection(profile)}. A local dev server is started only ` +
      'for a plain local address (no TLS, no API key); check the address, the namespace, the certificates or the API key, and that the server is up.',
  };
}

export class TemporalUnreachableError extends Error {
  override name = 'TemporalUnreachableError';
}
