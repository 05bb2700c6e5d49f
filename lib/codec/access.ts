import { randomBytes, timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import type { ApiKey, Config } from '../config';
import { readOrCreateSecretFile, readSecretFile } from '../secret-files';

/**
 * Who may decode: operators only. A caller shows it with an operator's API key (`Authorization: Bearer`, as the
 * `temporal` CLI's `--codec-auth` sends it), or by calling the endpoint the Temporal UI is configured with,
 * `<base>/ui/<token>/decode`: the UI sends no credentials of its own that skillflow could check (see docs/operators.md),
 * so its endpoint carries a secret, and whoever can open that UI can decode.
 */
export interface CodecAccess {
  authEnabled: boolean;
  /** The API keys, operators' and others' (read again until the API has generated its key). */
  keys: () => ApiKey[];
  uiToken: string;
}

export type CodecAction = 'decode' | 'encode';

export interface CodecRoute {
  action: CodecAction | undefined;
  /** The token of a `/ui/<token>/...` path. */
  uiToken?: string;
}

export type AccessVerdict =
  { allowed: true; caller: string } | { allowed: false; status: 401 | 403; code: string; message: string };

/** Only the last segment of the path names the action (the protocol lets the endpoints sit at any depth). */
export function routeOf(pathname: string): CodecRoute {
  const segments = pathname.split('/').filter(Boolean);
  const last = segments.at(-1);
  const action = last === 'decode' || last === 'encode' ? last : undefined;
  return segments[0] === 'ui' && segments.length >= 2 ? { action, uiToken: segments[1] } : { action };
}

export function checkAccess(access: CodecAccess, route: CodecRoute, authorization: string | undefined): AccessVerdict {
  if (!access.authEnabled) return { allowed: true, caller: 'local' };
  if (route.uiToken !== undefined) {
    return same(access.uiToken, route.uiToken)
      ? { allowed: true, caller: 'temporal-ui' }
      : {
          allowed: false,
          status: 401,
          code: 'unauthorized',
          message: 'That UI endpoint token is not valid: use the endpoint the codec printed at start.',
        };
  }
  const given = authorization ? /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1] : undefined;
  if (!given) {
    return {
      allowed: false,
      status: 401,
      code: 'unauthorized',
      message:
        'Send an operator\'s API key as "Authorization: Bearer <key>", or call the UI endpoint (/ui/<token>/decode).',
    };
  }
  const key = access.keys().find((candidate) => same(candidate.key, given));
  if (!key) return { allowed: false, status: 401, code: 'unauthorized', message: 'That API key is not valid.' };
  if (!key.operator)
    return {
      allowed: false,
      status: 403,
      code: 'forbidden',
      message: "Only operators may decode payloads, and that key is not an operator's.",
    };
  return { allowed: true, caller: key.user };
}

function same(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * The keys and UI token of a deployment: SKILLFLOW_API_KEYS, else the key the API generated into the secrets dir (the
 * codec never generates one: until the API has, only the UI endpoint is open); SKILLFLOW_CODEC_UI_TOKEN, else one
 * generated once into the secrets dir, where `npm start` and the codec both find it.
 */
export function codecAccessOf(config: Config, warn: (line: string) => void): CodecAccess {
  let uiToken: string;
  try {
    uiToken = uiTokenOf(config);
  } catch (err) {
    // A read-only secrets dir (compose mounts the API's read-only): the UI endpoint stays closed, keys still work.
    warn(
      `The UI endpoint is closed: no SKILLFLOW_CODEC_UI_TOKEN, and none can be kept in ${config.secretsDir} (${(err as Error).message}).`,
    );
    uiToken = randomBytes(32).toString('base64url');
  }
  return { authEnabled: config.authEnabled, keys: apiKeysOf(config), uiToken };
}

function apiKeysOf(config: Config): () => ApiKey[] {
  if (config.apiKeys.length > 0) return () => config.apiKeys;
  const file = path.join(config.secretsDir, 'api-key');
  let found: ApiKey[] = [];
  return () => {
    if (found.length > 0) return found;
    const key = readSecretFile(file);
    if (key !== undefined) found = [{ key, user: 'local', operator: true }];
    return found;
  };
}

export function uiTokenOf(config: Config): string {
  if (config.codec.uiToken) return config.codec.uiToken;
  return readOrCreateSecretFile(path.join(config.secretsDir, 'codec-ui-token'), () =>
    randomBytes(32).toString('base64url'),
  ).value;
}

/** The endpoint to configure the Temporal UI with (`--ui-codec-endpoint`, TEMPORAL_CODEC_ENDPOINT). */
export const uiEndpointOf = (baseUrl: string, uiToken: string) => `${baseUrl.replace(/\/+$/, '')}/ui/${uiToken}`;
