import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { SearchAttributeType } from '@temporalio/common';
import { loadConfig } from '../lib/config';
import { pinnedCliVersion } from '../lib/temporal-cli';
import { temporalProfileVariables } from '../lib/temporal-connection';
import { pinnedServerVersion } from '../lib/temporal-server';
import { searchAttributeNames, searchAttributes } from '../workflows/search-attributes';

/**
 * Static checks of the container deployment (docker-compose.yml, Dockerfile, .dockerignore, deploy/): no Docker
 * needed. They pin the wiring that a typo would silently break at `docker compose up` time.
 */

const root = path.resolve(__dirname, '..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string } | string;
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string | null>;
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
  restart?: string;
  stop_grace_period?: string;
}

interface Compose {
  services: Record<string, Service>;
  volumes: Record<string, unknown>;
}

// Merge keys (`<<: *skillflow-common`) as docker compose reads them.
const compose = parse(read('docker-compose.yml'), { merge: true }) as Compose;
const services = compose.services;
const service = (name: string): Service => {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
};
const env = (name: string): Record<string, string | null> => service(name).environment ?? {};

/** Container port of a short-syntax port mapping: "127.0.0.1:7233:7233" -> 7233. */
const containerPort = (mapping: string) =>
  Number(
    mapping
      .split(':')
      .at(-1)
      ?.replace(/\/(tcp|udp)$/, ''),
  );
/** Host port of a short-syntax port mapping: "127.0.0.1:8080:8080" -> 8080, "3000:3000" -> 3000. */
const hostPort = (mapping: string) => Number(mapping.split(':').at(-2));
/** Named volume mounted at `target`, or undefined. */
const namedVolumeAt = (svc: Service, target: string) =>
  (svc.volumes ?? [])
    .map((spec) => spec.split(':'))
    .find(([source, mountedAt]) => mountedAt === target && !/^[./~]/.test(source))?.[0];

/** Variable names lib/config.ts reads, taken from its source so a rename there shows up here. */
const configSource = read('lib/config.ts');
const configEnvNames = new Set([
  ...[...configSource.matchAll(/\b[a-zA-Z]+\(\s*'((?:SKILLFLOW|TEMPORAL|ANTHROPIC|OTEL)_[A-Z0-9_]+|PORT|HOST)'/g)].map(
    (m) => m[1],
  ),
  ...temporalProfileVariables,
]);
/**
 * Settings that make no sense in compose: the dev server's UI port, the local live socket Redis replaces, and the
 * connection profile's TLS, API key and profile file (compose runs its own Temporal, reached over plain TCP inside its network).
 */
const notForCompose = [
  'SKILLFLOW_TEMPORAL_UI_PORT',
  'SKILLFLOW_LIVE_SOCKET',
  ...temporalProfileVariables.filter((name) => name !== 'TEMPORAL_ADDRESS' && name !== 'TEMPORAL_NAMESPACE'),
];
/**
 * Who reads what (issue 13.13: each service gets only the settings, and above all the secrets, it needs). The API reads
 * its keys, limits and quotas, and the settings it creates sessions with; the worker the model, its key and the store.
 * Everything else (Temporal, the data dir, Redis, timeouts both use) reaches both.
 */
const apiOnly = [
  'PORT',
  'SKILLFLOW_API_KEYS',
  'SKILLFLOW_AUTH',
  'SKILLFLOW_UNAUTHENTICATED_NETWORK',
  'SKILLFLOW_STREAM_TOKEN_SECRET',
  'SKILLFLOW_SECRETS_DIR',
  'SKILLFLOW_STREAM_TOKEN_TTL_MS',
  'SKILLFLOW_MAX_MESSAGE_CHARS',
  'SKILLFLOW_LOG_REQUESTS',
  'SKILLFLOW_CORS_ORIGINS',
  'SKILLFLOW_RATE_LIMIT',
  'SKILLFLOW_ADDRESS_RATE_LIMIT',
  'SKILLFLOW_TRUSTED_PROXIES',
  'SKILLFLOW_MAX_STREAMS_PER_KEY',
  'SKILLFLOW_MAX_STREAMS',
  'SKILLFLOW_BODY_LIMIT_BYTES',
  'SKILLFLOW_REQUEST_TIMEOUT_MS',
  'SKILLFLOW_WAIT_TIMEOUT_MS',
  'SKILLFLOW_SESSION_IDLE_MS',
  'SKILLFLOW_MAX_SESSIONS_PER_USER',
  'SKILLFLOW_USER_DAILY_TOKENS',
  'SKILLFLOW_MODEL_MAX_ATTEMPTS',
  'SKILLFLOW_HISTORY_WINDOW',
  'SKILLFLOW_HISTORY_WINDOW_BYTES',
  'SKILLFLOW_MAX_MESSAGE_BYTES',
  'SKILLFLOW_MAX_ROUNDS',
  'SKILLFLOW_MAX_EMPTY_RETRIES',
  'SKILLFLOW_MAX_CONTINUATIONS',
  'SKILLFLOW_CONTEXT_WINDOW_TOKENS',
  'SKILLFLOW_CONTEXT_BUDGET',
  'SKILLFLOW_THINKING',
  'SKILLFLOW_THINKING_BUDGET_TOKENS',
  'SKILLFLOW_EFFORT',
  'SKILLFLOW_CHECKPOINT_TTL_MS',
  'SKILLFLOW_CHECKPOINT_ON_TIMEOUT',
  'SKILLFLOW_MAX_PLAN_VIOLATIONS',
  'SKILLFLOW_MAX_SKILL_DEPTH',
  'SKILLFLOW_MAX_INVOCATIONS_PER_RESPONSE',
  'SKILLFLOW_MAX_INVOCATIONS_PER_TURN',
  'SKILLFLOW_API_METRICS_PORT',
  'SKILLFLOW_APP',
  'SKILLFLOW_LINK_ACCESS_TTL_MS',
  'SKILLFLOW_TEMPORAL_UI_URL',
];
const workerOnly = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'SKILLFLOW_MODEL',
  'SKILLFLOW_WORKER_LOG_LEVEL',
  'SKILLFLOW_STORE_URL',
  'SKILLFLOW_STORE_RETENTION_HOURS',
  'SKILLFLOW_WORKER_SHUTDOWN_GRACE_MS',
  'SKILLFLOW_WORKER_METRICS_PORT',
  'SKILLFLOW_WORKER_HEALTH_PORT',
  'SKILLFLOW_DEFAULT_TOOLS',
  'SKILLFLOW_TOOLS_DIR',
  'SKILLFLOW_MCP_CONFIG',
  'SKILLFLOW_TOOL_CATALOG_MAX_BYTES',
  'SKILLFLOW_HTTP_FETCH_HOSTS',
  'SKILLFLOW_HTTP_FETCH_MAX_BYTES',
  'SKILLFLOW_HTTP_FETCH_TIMEOUT_MS',
  'SKILLFLOW_WORKER_MAX_CACHED_WORKFLOWS',
  'SKILLFLOW_WORKER_EAGER_ACTIVITIES',
  'SKILLFLOW_WORKER_HEAP_MB',
];
/** The codec's own settings (lib/codec): the codec service reads them, neither worker nor api. */
const codecOnly = [
  'SKILLFLOW_CODEC_HOST',
  'SKILLFLOW_CODEC_PORT',
  'SKILLFLOW_CODEC_UI_TOKEN',
  'SKILLFLOW_CODEC_UI_ORIGINS',
  'SKILLFLOW_CODEC_MAX_BODY_BYTES',
  'SKILLFLOW_CODEC_CONVERSATION_BYTES',
];
/** The secrets among them, and the one service each belongs to. */
const secrets = {
  ANTHROPIC_API_KEY: 'worker',
  SKILLFLOW_STORE_URL: 'worker',
  SKILLFLOW_API_KEYS: 'api',
  SKILLFLOW_STREAM_TOKEN_SECRET: 'api',
} as const;
/** Variables the compose file may set that lib/config.ts does not read; each is documented in docs/deployment.md. */
const documentedExtras = ['SKILLFLOW_REDIS_URL', 'OTEL_SERVICE_NAME'];

const apiCommand = ['node', '--import', 'tsx', 'api/server.ts'];
const workerCommand = ['sh', 'scripts/worker.sh'];

describe('docker-compose.yml services', () => {
  test('has exactly the expected services', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'api',
        'codec',
        'postgres',
        'redis',
        'temporal',
        'temporal-schema',
        'temporal-setup',
        'temporal-ui',
        'worker',
      ].sort(),
    );
  });

  test('every image is pinned to an explicit tag that is not "latest"', () => {
    for (const [name, svc] of Object.entries(services)) {
      expect({ name, image: svc.image }).toEqual({
        name,
        image: expect.stringMatching(/^[a-z0-9./_-]+:[A-Za-z0-9][A-Za-z0-9._-]*$/),
      });
      expect({ name, tag: svc.image!.split(':').at(-1) }).not.toEqual({ name, tag: 'latest' });
    }
    expect(service('temporal').image).toMatch(/^temporalio\/server:1\.29\.\d+$/);
    expect(service('postgres').image).toMatch(/^postgres:16(\.\d+)?$/);
    expect(service('redis').image).toMatch(/^redis:7(\.\d+)*(-alpine)?$/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:2\.\d+\.\d+$/);
  });

  test('the Temporal server is the release the topology suite builds and the tested CLI embeds, named in docs/deployment.md', () => {
    const built = pinnedServerVersion.replace(/^v/, '');
    expect(service('temporal').image).toBe(`temporalio/server:${built}`);
    const deployment = fs.readFileSync(path.join(root, 'docs', 'deployment.md'), 'utf8');
    expect(deployment).toContain(`server \`${built}\``);
    expect(deployment).toContain(`Temporal CLI ${pinnedCliVersion}`);
  });

  test('admin-tools jobs use the admin-tools release that matches the server version', () => {
    const serverVersion = service('temporal').image!.split(':')[1];
    for (const job of ['temporal-schema', 'temporal-setup']) {
      const [repo, tag] = service(job).image!.split(':');
      expect(repo).toBe('temporalio/admin-tools');
      expect(tag === serverVersion || tag.startsWith(`${serverVersion}-`)).toBe(true);
    }
  });

  test('long-running services restart; one-shot jobs do not', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'redis', 'worker', 'api', 'codec']) {
      expect({ name, restart: service(name).restart }).toEqual({ name, restart: 'unless-stopped' });
    }
    for (const name of ['temporal-schema', 'temporal-setup']) {
      expect({ name, restart: service(name).restart }).toEqual({ name, restart: 'no' });
    }
  });
});

describe('Temporal on PostgreSQL', () => {
  test('postgres keeps its data in a named volume and has a pg_isready healthcheck', () => {
    const volume = namedVolumeAt(service('postgres'), '/var/lib/postgresql/data');
    expect(volume).toBe('postgres-data');
    expect(Object.keys(compose.volumes)).toContain(volume);
    expect(service('postgres').healthcheck?.test.join(' ')).toContain('pg_isready');
  });

  test('the schema job runs after postgres is healthy and runs a script that exists', () => {
    expect(service('temporal-schema').depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(env('temporal-schema')).toMatchObject({ POSTGRES_SEEDS: 'postgres', POSTGRES_USER: 'temporal' });
    const script = hostScript(service('temporal-schema'));
    expect(script).toBe('deploy/temporal/setup-schema.sh');
    const text = read(script);
    for (const step of [
      'create',
      'setup-schema -v 0.0',
      'update-schema -d "$schema_root/temporal/versioned"',
      'update-schema -d "$schema_root/visibility/versioned"',
    ]) {
      expect(text).toContain(step);
    }
  });

  test('temporal depends on postgres healthy and on the finished schema job', () => {
    expect(service('temporal').depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    expect(env('temporal')).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgres', BIND_ON_IP: '0.0.0.0' });
    expect(service('temporal').healthcheck?.test).toBeDefined();
  });

  test('the dynamic config file temporal is told to read is mounted from deploy/', () => {
    const configPath = env('temporal').DYNAMIC_CONFIG_FILE_PATH!;
    expect(configPath).toBe('config/dynamicconfig/skillflow.yaml');
    const mount = service('temporal')
      .volumes!.map((spec) => spec.split(':'))
      .find(([, target]) => target === '/etc/temporal/config/dynamicconfig');
    expect(mount?.[0]).toBe('./deploy/temporal/dynamicconfig');
    const dynamicConfig = parse(read(path.join(mount![0], path.basename(configPath)))) as Record<string, unknown>;
    expect(Object.keys(dynamicConfig)).toEqual(['limit.maxIDLength', 'system.enableActivityEagerExecution']);
    // Eager activities, as on the dev server (lib/dev-server.ts): the worker reserves slots for them.
    expect(dynamicConfig['system.enableActivityEagerExecution']).toEqual([{ value: true, constraints: {} }]);
  });

  test('the UI talks to the frontend and is published on 8080', () => {
    expect(env('temporal-ui').TEMPORAL_ADDRESS).toBe(`temporal:${temporalGrpcPort()}`);
    expect(service('temporal-ui').depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    expect(service('temporal-ui').ports?.map((p) => [hostPort(p), containerPort(p)])).toEqual([[8080, 8080]]);
  });
});

describe('the codec', () => {
  const codec = () => service('codec');

  test('runs lib/codec/main.ts from the project image, after the API (whose generated key it reads), with every setting of its own', () => {
    expect(codec().build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
    expect(codec().command).toEqual(['node', '--import', 'tsx', 'lib/codec/main.ts']);
    expect(fs.existsSync(path.join(root, 'lib/codec/main.ts'))).toBe(true);
    expect(codec().depends_on).toEqual({ api: { condition: 'service_healthy' } });
    for (const key of codecOnly) expect({ key, present: key in env('codec') }).toEqual({ key, present: true });
    const unknown = Object.keys(env('codec')).filter((key) => !configEnvNames.has(key));
    expect(unknown).toEqual([]);
  });

  test("reads the workers' store and skill store and the API's keys, read-only, in the same places", () => {
    for (const key of [
      'TEMPORAL_NAMESPACE',
      'SKILLFLOW_DATA_DIR',
      'SKILLFLOW_STORE_URL',
      'SKILLFLOW_STORE_RETENTION_HOURS',
    ]) {
      expect({ key, codec: env('codec')[key] }).toEqual({ key, codec: env('worker')[key] });
    }
    for (const key of [
      'SKILLFLOW_SECRETS_DIR',
      'SKILLFLOW_API_KEYS',
      'SKILLFLOW_AUTH',
      'SKILLFLOW_UNAUTHENTICATED_NETWORK',
      'SKILLFLOW_ADDRESS_RATE_LIMIT',
    ]) {
      expect({ key, codec: env('codec')[key] }).toEqual({ key, codec: env('api')[key] });
    }
    expect(codec().volumes).toEqual(['skillflow-data:/data:ro', 'skillflow-api-secrets:/secrets:ro']);
  });

  test("is published on loopback at the port the UI's endpoint names, for the UI's origins", () => {
    const port = Number(env('codec').SKILLFLOW_CODEC_PORT);
    expect(env('codec').SKILLFLOW_CODEC_HOST).toBe('0.0.0.0');
    expect(codec().ports).toEqual([`127.0.0.1:${port}:${port}`]);
    expect(env('temporal-ui').TEMPORAL_CODEC_ENDPOINT).toBe(
      `\${SKILLFLOW_CODEC_UI_TOKEN:+http://localhost:${port}/ui/\${SKILLFLOW_CODEC_UI_TOKEN}}`,
    );
    expect(env('temporal-ui')).toMatchObject({
      TEMPORAL_CODEC_PASS_ACCESS_TOKEN: 'false',
      TEMPORAL_CODEC_INCLUDE_CREDENTIALS: 'false',
    });
    const uiPort = hostPort(service('temporal-ui').ports![0]);
    expect(env('codec').SKILLFLOW_CODEC_UI_ORIGINS).toBe(
      `\${SKILLFLOW_CODEC_UI_ORIGINS:-http://localhost:${uiPort},http://127.0.0.1:${uiPort}}`,
    );
  });
});

describe('the setup job', () => {
  const setup = () => service('temporal-setup');
  const script = () => read(hostScript(setup()));

  test('runs once temporal is healthy, against the same namespace the worker and API use', () => {
    expect(setup().depends_on).toEqual({ temporal: { condition: 'service_healthy' } });
    expect(env('temporal-setup').TEMPORAL_ADDRESS).toBe(`temporal:${temporalGrpcPort()}`);
    expect(env('temporal-setup').TEMPORAL_NAMESPACE).toBe('${TEMPORAL_NAMESPACE:-default}');
    expect(env('temporal-setup').TEMPORAL_NAMESPACE).toBe(env('worker').TEMPORAL_NAMESPACE);
    expect(hostScript(setup())).toBe('deploy/temporal/setup-skillflow.sh');
  });

  test('registers exactly the search attributes of workflows/search-attributes.ts, all Keyword', () => {
    const listed = env('temporal-setup').SKILLFLOW_SEARCH_ATTRIBUTES!.split(/\s+/);
    expect(listed).toEqual(searchAttributeNames);
    expect(listed).toEqual([
      'SkillflowSession',
      'SkillflowUser',
      'SkillflowStatus',
      'SkillflowSkill',
      'SkillflowStep',
      'SkillflowCheckpoint',
      'SkillflowDepth',
      'SkillflowTurn',
    ]);
    for (const key of Object.values(searchAttributes)) expect(key.type).toBe(SearchAttributeType.KEYWORD);
    expect(script()).toContain('for name in $names; do');
    expect(script()).toContain(
      'operator search-attribute create --address "$address" --namespace "$namespace" \\\n      --name "$name" --type Keyword',
    );
  });

  test('tolerates attributes that already exist, but not ones with another type', () => {
    const text = script();
    expect(text).toMatch(/\*"different type"\*\)[\s\S]*?exit 1/);
    expect(text.indexOf('*"different type"*)')).toBeLessThan(text.indexOf('*"already exists"*)'));
    expect(text).toMatch(/\*"already exists"\*\)\s*\n\s*echo "[^"]*"\s*\n\s*break/);
  });

  test('sets the namespace retention from SKILLFLOW_RETENTION_DAYS, 30 days by default', () => {
    expect(env('temporal-setup').SKILLFLOW_RETENTION_DAYS).toBe('${SKILLFLOW_RETENTION_DAYS:-30}');
    expect(configSource).toContain("integer('SKILLFLOW_RETENTION_DAYS', 30,");
    const text = script();
    expect(text).toContain('days="${SKILLFLOW_RETENTION_DAYS:-30}"');
    expect(text).toContain('retention="$((days * 24))h"');
    expect(text).toContain(
      'operator namespace update --address "$address" --namespace "$namespace" --retention "$retention"',
    );
    expect(text).toContain(
      'operator namespace create --address "$address" --namespace "$namespace" --retention "$retention"',
    );
  });
});

describe('worker and api', () => {
  test.each(['worker', 'api'])('%s is built from the project Dockerfile', (name) => {
    expect(service(name).build).toEqual({ context: '.', dockerfile: 'Dockerfile' });
  });

  test('the worker runs the worker entry point and the api the API entry point', () => {
    expect(service('worker').command).toEqual(workerCommand);
    expect(service('api').command).toEqual(apiCommand);
    expect(fs.existsSync(path.join(root, 'worker/main.ts'))).toBe(true);
    expect(fs.readFileSync(path.join(root, 'scripts/worker.sh'), 'utf8')).toContain('worker/main.ts');
    expect(fs.existsSync(path.join(root, 'api/server.ts'))).toBe(true);
  });

  test.each(['worker', 'api'])('%s waits for temporal healthy, the finished setup job and redis', (name) => {
    expect(service(name).depends_on).toEqual({
      temporal: { condition: 'service_healthy' },
      'temporal-setup': { condition: 'service_completed_successfully' },
      redis: { condition: 'service_healthy' },
    });
  });

  test.each(['worker', 'api'])('%s points TEMPORAL_ADDRESS at the temporal service gRPC port', (name) => {
    expect(env(name).TEMPORAL_ADDRESS).toBe(`temporal:${temporalGrpcPort()}`);
  });

  test('worker and api get the common settings alike, with the values the containers need', () => {
    for (const name of ['worker', 'api']) {
      expect(env(name)).toMatchObject({
        TEMPORAL_NAMESPACE: '${TEMPORAL_NAMESPACE:-default}',
        SKILLFLOW_TASK_QUEUE: '${SKILLFLOW_TASK_QUEUE:-skillflow}',
        SKILLFLOW_DATA_DIR: '/data',
        SKILLFLOW_SKILLS_DIR: '/app/skills',
        SKILLFLOW_REDIS_URL: 'redis://redis:6379',
        HOST: '0.0.0.0',
      });
    }
    const shared = Object.keys(env('api')).filter((key) => key in env('worker'));
    for (const key of shared) expect({ key, worker: env('worker')[key] }).toEqual({ key, worker: env('api')[key] });
    expect(env('api').PORT).toBe('3000');
    // Passed through from the host: no value in the file, so an unset host variable stays unset in the container.
    for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'SKILLFLOW_MODEL']) {
      expect({ name, value: env('worker')[name] }).toEqual({ name, value: null });
    }
  });

  test('each secret reaches only the service that uses it; the API keeps its generated secrets in a volume of its own', () => {
    for (const [secret, owner] of Object.entries(secrets)) {
      const other = owner === 'api' ? 'worker' : 'api';
      expect({ secret, in: owner, present: secret in env(owner) }).toEqual({ secret, in: owner, present: true });
      expect({ secret, in: other, present: secret in env(other) }).toEqual({ secret, in: other, present: false });
    }
    const secretsDir = env('api').SKILLFLOW_SECRETS_DIR!;
    expect(secretsDir).toBe('/secrets');
    expect(namedVolumeAt(service('api'), secretsDir)).toBe('skillflow-api-secrets');
    expect(Object.keys(compose.volumes)).toContain('skillflow-api-secrets');
    expect((service('worker').volumes ?? []).some((spec) => spec.startsWith('skillflow-api-secrets:'))).toBe(false);
    expect(read('Dockerfile')).toContain('chown node:node /data /secrets && chmod 700 /secrets');
  });

  test('every variable set for worker/api is read by lib/config.ts or documented as an extra', () => {
    expect([...configEnvNames]).toEqual(
      expect.arrayContaining([
        'TEMPORAL_ADDRESS',
        'TEMPORAL_NAMESPACE',
        'SKILLFLOW_TASK_QUEUE',
        'SKILLFLOW_DATA_DIR',
        'SKILLFLOW_SKILLS_DIR',
        'ANTHROPIC_API_KEY',
        'ANTHROPIC_BASE_URL',
        'SKILLFLOW_MODEL',
        'HOST',
        'PORT',
      ]),
    );
    for (const name of ['worker', 'api']) {
      const unknown = Object.keys(env(name)).filter(
        (key) => !configEnvNames.has(key) && !documentedExtras.includes(key),
      );
      expect({ service: name, unknown }).toEqual({ service: name, unknown: [] });
    }
    const docs = read('docs/deployment.md');
    for (const extra of documentedExtras) expect(docs).toContain(extra);
  });

  test('every setting lib/config.ts reads reaches the services that read it, and no other; except the few that make no sense in compose', () => {
    expect(configEnvNames.size).toBeGreaterThan(30);
    for (const key of [...apiOnly, ...workerOnly])
      expect({ key, readByConfig: configEnvNames.has(key) }).toEqual({ key, readByConfig: true });
    for (const key of codecOnly)
      expect({ key, readByConfig: configEnvNames.has(key) }).toEqual({ key, readByConfig: true });
    const readers = (key: string) =>
      codecOnly.includes(key)
        ? ['codec']
        : apiOnly.includes(key)
          ? ['api']
          : workerOnly.includes(key)
            ? ['worker']
            : ['worker', 'api'];
    for (const name of ['worker', 'api']) {
      const missing = [...configEnvNames].filter(
        (key) => readers(key).includes(name) && !(key in env(name)) && !notForCompose.includes(key),
      );
      expect({ service: name, missing }).toEqual({ service: name, missing: [] });
      const strays = Object.keys(env(name)).filter((key) => !readers(key).includes(name));
      expect({ service: name, strays }).toEqual({ service: name, strays: [] });
    }
  });

  test('api publishes its port on the host', () => {
    const port = Number(env('api').PORT);
    expect(service('api').ports?.map((p) => [hostPort(p), containerPort(p)])).toEqual([[port, port]]);
    expect(service('worker').ports).toBeUndefined();
  });

  test('worker and api share one named data volume at SKILLFLOW_DATA_DIR', () => {
    const workerVolume = namedVolumeAt(service('worker'), env('worker').SKILLFLOW_DATA_DIR!);
    const apiVolume = namedVolumeAt(service('api'), env('api').SKILLFLOW_DATA_DIR!);
    expect(workerVolume).toBe('skillflow-data');
    expect(apiVolume).toBe(workerVolume);
    expect(Object.keys(compose.volumes)).toContain(workerVolume);
  });

  test("the worker's stop_grace_period leaves room for its shutdown grace, which is the default", () => {
    const graceMs = Number(env('worker').SKILLFLOW_WORKER_SHUTDOWN_GRACE_MS);
    expect(graceMs).toBe(loadConfig({}).workerShutdownGraceMs);
    const stopSeconds = Number(/^(\d+)s$/.exec(String(service('worker').stop_grace_period))?.[1]);
    expect(stopSeconds * 1000).toBeGreaterThanOrEqual(graceMs + 5_000);
  });

  test('redis is there for them, with a healthcheck', () => {
    expect(env('api').SKILLFLOW_REDIS_URL).toBe('redis://redis:6379');
    expect(service('redis').healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
  });
});

describe('Dockerfile and .dockerignore', () => {
  const dockerfile = read('Dockerfile');
  const instructions = dockerfile
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const index = (prefix: string) => instructions.findIndex((line) => line.startsWith(prefix));

  const runtimeStart = instructions.lastIndexOf('FROM node:20-slim');

  test('is based on node:20-slim', () => {
    expect(instructions.filter((line) => line.startsWith('FROM '))).toEqual([
      'FROM node:20-slim AS web',
      'FROM node:20-slim',
    ]);
  });

  test('builds the web app in a stage of its own, with the dev dependencies, and copies only web/dist into the image', () => {
    const web = instructions.slice(0, runtimeStart);
    const runtime = instructions.slice(runtimeStart);
    expect(web[0]).toBe('FROM node:20-slim AS web');
    const install = web.findIndex((line) => /^RUN npm ci\b/.test(line));
    expect(web[install]).toContain('--ignore-scripts');
    expect(web[install]).not.toContain('--omit=dev');
    const build = web.findIndex((line) => line.includes('vite.js build --config web/vite.config.mts'));
    expect(build).toBeGreaterThan(install);
    expect(fs.existsSync(path.join(root, 'web', 'vite.config.mts'))).toBe(true);
    const copyBuild = runtime.indexOf('COPY --from=web /build/web/dist ./web/dist');
    expect(copyBuild).toBeGreaterThan(runtime.indexOf('COPY . .'));
    // The API serves /app from web/dist next to its code (api/web-app.ts), which is /app/web/dist in the image.
    expect(runtime).toContain('WORKDIR /app');
  });

  test('installs with npm ci from the lockfile before copying the source', () => {
    const index = (prefix: string) =>
      runtimeStart + instructions.slice(runtimeStart).findIndex((line) => line.startsWith(prefix));
    const copyManifests = index('COPY package.json package-lock.json');
    const install = index('RUN npm ci ');
    const copySource = index('COPY . .');
    expect(copyManifests).toBeGreaterThan(runtimeStart);
    expect(install).toBeGreaterThan(copyManifests);
    expect(copySource).toBeGreaterThan(install);
    expect(instructions[install]).toContain('--ignore-scripts');
    expect(instructions[install]).toContain('--omit=dev');
  });

  test('runs as a non-root user', () => {
    const users = instructions.filter((line) => line.startsWith('USER '));
    expect(users.at(-1)).toBe('USER node');
    const lastRun = instructions.map((line) => line.startsWith('RUN ')).lastIndexOf(true);
    expect(lastRun).toBeGreaterThan(0);
    expect(index('USER node')).toBeGreaterThan(lastRun);
  });

  test('runs the API by default', () => {
    const cmd = instructions.at(-1)!;
    expect(cmd.startsWith('CMD [')).toBe(true);
    expect(JSON.parse(cmd.slice('CMD '.length))).toEqual(apiCommand);
    expect(index('ENTRYPOINT')).toBe(-1);
  });

  test('.dockerignore keeps local state, dependencies and history out of the build context', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.data', '.cache', '.git', '.env']));
  });
});

/** The gRPC port the temporal service listens on: the container side of its published port and its healthcheck. */
function temporalGrpcPort(): number {
  const ports = service('temporal').ports ?? [];
  expect(ports).toHaveLength(1);
  const port = containerPort(ports[0]);
  expect(service('temporal').healthcheck?.test).toContain(String(port));
  return port;
}

/** The repository path of the script a job's entrypoint runs, resolved through the job's bind mounts. */
function hostScript(svc: Service): string {
  const scriptInContainer = svc.entrypoint?.at(-1) ?? '';
  for (const spec of svc.volumes ?? []) {
    const [source, target] = spec.split(':');
    if (source.startsWith('./') && scriptInContainer.startsWith(`${target}/`)) {
      const file = path.posix.join(source.slice(2), scriptInContainer.slice(target.length + 1));
      expect(fs.existsSync(path.join(root, file))).toBe(true);
      return file;
    }
  }
  throw new Error(`entrypoint ${JSON.stringify(svc.entrypoint)} does not run a script from a bind-mounted folder`);
}
