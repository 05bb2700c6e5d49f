import { SkillflowApiError, SkillflowClient } from '../../lib/client';
import type { LinkAccess, linkAuthErrors } from '../../core/protocol/links';
import { forgetCredential, loadCredential, saveCredential, type Credential } from './credentials';

export { SkillflowApiError };

/** The API is the page's own origin: /app is served by it, so there is no cross-origin request anywhere. */
export const apiBase = (): string => location.origin;

/** One problem of a 400 (invalid_decision, invalid_params): where (`overrides.question_count`), which rule, in words. */
export interface FieldProblem {
  path: string;
  rule: string;
  message: string;
}

/** The client's error with the problems of a 400, which the page shows on the fields they name. */
export class ApiError extends SkillflowApiError {
  constructor(
    status: number,
    code: string,
    message: string,
    requestId: string | undefined,
    readonly details: FieldProblem[],
  ) {
    super(status, code, message, requestId);
  }
}

async function errorOf(response: Response): Promise<ApiError> {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  try {
    const { error } = (await response.json()) as {
      error: { code: string; message: string; requestId?: string; details?: FieldProblem[] };
    };
    return new ApiError(response.status, error.code, error.message, error.requestId ?? requestId, error.details ?? []);
  } catch {
    return new ApiError(response.status, 'http_error', `HTTP ${response.status}`, requestId, []);
  }
}

/** An error for people: the API's message and the request id to quote. */
export function messageOf(err: unknown): string {
  if (err instanceof SkillflowApiError) return `${err.message}${err.requestId ? ` (request ${err.requestId})` : ''}`;
  return err instanceof Error ? err.message : String(err);
}

let current: Credential | null = loadCredential();
type Listener = (credential: Credential | null, reason?: string) => void;
const listeners = new Set<Listener>();

export const currentCredential = (): Credential | null => current;

/** Called whenever the page signs in or out; `reason` says why a link stopped working. */
export function onCredential(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setCredential(credential: Credential | null, reason?: string): void {
  current = credential;
  if (credential) saveCredential(credential);
  else forgetCredential();
  for (const listener of listeners) listener(credential, reason);
}

export function signOut(): void {
  setCredential(null);
}

type LinkAuthError = (typeof linkAuthErrors)[keyof typeof linkAuthErrors];

/** What a person reads when a link is refused, for each of the API's codes (the type keeps the two lists equal). */
export const linkProblems: Record<LinkAuthError, string> = {
  link_revoked: 'This link was revoked. Ask the person who sent it for a new one.',
  link_expired: 'This link has expired. Ask the person who sent it for a new one.',
  link_unknown: 'This link is not valid. Check that you opened it whole, or ask for a new one.',
};

export const isLinkAuthError = (code: string | undefined): code is LinkAuthError =>
  code !== undefined && code in linkProblems;

/** Signs in with an API key once the API accepted it (a list of one session costs nothing). */
export async function signInWithKey(key: string): Promise<void> {
  const response = await fetch(`${apiBase()}/v1/sessions?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) throw await errorOf(response);
  setCredential({ kind: 'key', key });
}

async function exchange(linkToken: string): Promise<Credential> {
  const response = await fetch(`${apiBase()}/v1/links/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: linkToken }),
  });
  if (!response.ok) throw await errorOf(response);
  const { token, expiresAt, link } = (await response.json()) as LinkAccess;
  return { kind: 'link', linkToken, token, expiresAt, link };
}

/** Trades an answer link for an access token of this tab. */
export async function signInWithLink(linkToken: string): Promise<Credential> {
  const credential = await exchange(linkToken);
  setCredential(credential);
  return credential;
}

/** Trades the link again; a link that no longer works (revoked, expired) signs the page out, saying why. */
async function retrade(linkToken: string): Promise<void> {
  try {
    setCredential(await exchange(linkToken));
  } catch (err) {
    if (err instanceof ApiError && isLinkAuthError(err.code)) setCredential(null, linkProblems[err.code]);
    throw err;
  }
}

/** An access token this close to its end is traded again before use. */
const refreshBeforeMs = 60_000;

async function bearer(): Promise<string | undefined> {
  const credential = current;
  if (!credential) return undefined;
  if (credential.kind === 'key') return credential.key;
  if (Date.parse(credential.expiresAt) - Date.now() < refreshBeforeMs) await retrade(credential.linkToken);
  return (current as Extract<Credential, { kind: 'link' }>).token;
}

const eventsPath = /^\/v1\/turns\/([^/]+)\/events$/;

/**
 * fetch with the page's credential: `Authorization: Bearer` with the key or the link's access token (traded again
 * when it runs out). A link follows a turn's events with a stream token of that turn (`?token=`, which the API keeps
 * out of its logs), as EventSource-like clients do.
 */
export async function apiFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const send = async (): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString(), apiBase());
    const headers = new Headers(init.headers);
    headers.delete('authorization');
    const token = await bearer();
    const events = eventsPath.exec(url.pathname);
    if (events && current?.kind === 'link') {
      const { token: streamToken } = await apiPost<{ token: string }>('/v1/stream-tokens', {
        turnId: decodeURIComponent(events[1]),
      });
      url.searchParams.set('token', streamToken);
    } else if (token) {
      headers.set('authorization', `Bearer ${token}`);
    }
    return fetch(url, { ...init, headers });
  };
  const response = await send();
  if (response.status !== 401 || current?.kind !== 'link') return response;
  const code = await response
    .clone()
    .json()
    .then((body: { error?: { code?: string } }) => body.error?.code)
    .catch(() => undefined);
  if (code !== undefined && retradeCodes.has(code)) {
    await retrade(current.linkToken);
    return send();
  }
  // The link itself no longer works (revoked, expired): the page signs out and says so.
  if (isLinkAuthError(code)) setCredential(null, linkProblems[code]);
  return response;
}

/**
 * The 401s of an access token that ran out, or that an API with another secret no longer reads: the link itself may
 * still work, so it is traded again.
 */
const retradeCodes = new Set(['token_expired', 'invalid_token']);

export const client = (): SkillflowClient => new SkillflowClient({ baseUrl: apiBase(), fetch: apiFetch });

export async function apiGet<T>(path: string): Promise<T> {
  const response = await apiFetch(path);
  if (!response.ok) throw await errorOf(response);
  return (await response.json()) as T;
}

/** A POST whose refusal keeps its `details` (ApiError), for forms that show each problem on its field. */
export async function apiPost<T>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
  const response = await apiFetch(path, {
    method: 'POST',
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!response.ok) throw await errorOf(response);
  return (response.status === 204 ? undefined : await response.json()) as T;
}
