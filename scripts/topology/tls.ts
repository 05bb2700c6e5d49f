import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ServerTls } from '../../lib/temporal-server';

/**
 * Certificates for running the topology's Temporal frontend with mutual TLS, made with the machine's `openssl`: a CA,
 * the server's certificate (for localhost and 127.0.0.1, also valid as a client: the server's own services present it),
 * a client certificate for skillflow's processes, and a client certificate from another CA that must be refused.
 */
export interface TopologyTls {
  server: ServerTls;
  /** The variables of Temporal's client configuration that give a process the client certificate. */
  clientEnv: Record<string, string>;
  caFile: string;
  client: { certFile: string; keyFile: string };
  stranger: { certFile: string; keyFile: string };
}

export class OpensslMissingError extends Error {
  override name = 'OpensslMissingError';
}

const serverName = 'localhost';

export function makeTopologyTls(dir: string): TopologyTls {
  fs.mkdirSync(dir, { recursive: true });
  const file = (name: string) => path.join(dir, name);
  const ca = makeCa(dir, 'ca', 'skillflow topology CA');
  const server = signed(dir, 'server', ca, `CN=${serverName}`, [
    `subjectAltName=DNS:${serverName},IP:127.0.0.1`,
    'extendedKeyUsage=serverAuth,clientAuth',
  ]);
  const client = signed(dir, 'client', ca, 'CN=skillflow', ['extendedKeyUsage=clientAuth']);
  const strangerCa = makeCa(dir, 'stranger-ca', 'another CA');
  const stranger = signed(dir, 'stranger', strangerCa, 'CN=skillflow', ['extendedKeyUsage=clientAuth']);
  return {
    server: { certFile: server.certFile, keyFile: server.keyFile, caFile: file('ca.pem'), serverName },
    clientEnv: {
      TEMPORAL_TLS_CLIENT_CERT_PATH: client.certFile,
      TEMPORAL_TLS_CLIENT_KEY_PATH: client.keyFile,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: file('ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: serverName,
    },
    caFile: file('ca.pem'),
    client,
    stranger,
  };
}

interface Pair {
  certFile: string;
  keyFile: string;
}

function makeCa(dir: string, name: string, commonName: string): Pair {
  const pair = { certFile: path.join(dir, `${name}.pem`), keyFile: path.join(dir, `${name}.key`) };
  openssl([
    'req',
    '-x509',
    ...ecKey(pair.keyFile),
    '-out',
    pair.certFile,
    '-days',
    '2',
    '-subj',
    `/CN=${commonName}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return pair;
}

function signed(dir: string, name: string, ca: Pair, subject: string, extensions: string[]): Pair {
  const pair = { certFile: path.join(dir, `${name}.pem`), keyFile: path.join(dir, `${name}.key`) };
  const request = path.join(dir, `${name}.csr`);
  const extensionFile = path.join(dir, `${name}.ext`);
  fs.writeFileSync(
    extensionFile,
    ['basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', ...extensions].join('\n') + '\n',
  );
  openssl(['req', ...ecKey(pair.keyFile), '-out', request, '-subj', `/${subject}`]);
  openssl([
    'x509',
    '-req',
    '-in',
    request,
    '-CA',
    ca.certFile,
    '-CAkey',
    ca.keyFile,
    '-CAcreateserial',
    '-out',
    pair.certFile,
    '-days',
    '2',
    '-extfile',
    extensionFile,
  ]);
  return pair;
}

const ecKey = (keyFile: string) => [
  '-newkey',
  'ec',
  '-pkeyopt',
  'ec_paramgen_curve:prime256v1',
  '-nodes',
  '-keyout',
  keyFile,
];

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const error = err as NodeJS.ErrnoException & { stderr?: Buffer };
    if (error.code === 'ENOENT') {
      throw new OpensslMissingError(
        'The topology suite makes its TLS certificates with `openssl`, which is not on PATH: apt-get install -y openssl.',
      );
    }
    throw new Error(`openssl ${args[0]} failed: ${error.stderr?.toString().trim() ?? error.message}`);
  }
}
