import { SkillflowApiError, SkillflowClient } from '../../lib/client';
import { forgetCredential, loadCredential, saveCredential, type Credential, type LinkScope } from './credentials';

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
const listeners = new Set<(credential: Credential | null) => void>();

export const currentCredential = (): Credential | null => current;

export function onCredential(listener: (credential: Credential | null) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function setCredential(credential: Credential | null): void {
  current = credential;
  if (credential) saveCredential(credential);
  else forgetCredential();
  for (const listener of listeners) listener(credential);
}

export function signOut(): void {
  setCredential(null);
}

/** Signs in with an API key once the API accepted it (a list of one session costs nothing). */
export async function signInWithKey(key: string): Promise<void> {
  const response = await fetch(`${apiBase()}/v1/sessions?limit=1`, { headers: { authorization: `Bearer ${key}` } });
  if (!response.ok) throw await errorOf(response);
  setCredential({ kind: 'key', key });
}

interface Exchanged {
  token: string;
  expiresAt: string;
  link: LinkScope;
}

async function exchange(linkToken: string): Promise<Credential> {
  const response = await fetch(`${apiBase()}/v1/links/exchange`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: linkToken }),
  });
  if (!response.ok) throw await errorOf(response);
  const { token, expiresAt, link } = (await response.json()) as Exchanged;
  return { kind: 'link', linkToken, token, expiresAt, link };
}

/** Trades an answer link for an access token of this tab. */
export async function signInWithLink(linkToken: string): Promise<Credential> {
  const credential = await exchange(linkToken);
  setCredential(credential);
  return credential;
}

/** An access token this close to its end is traded again before use. */
const refreshBeforeMs = 60_000;

async function bearer(): Promise<string | undefined> {
  const credential = current;
  if (!credential) return undefined;
  if (credential.kind === 'key') return credential.key;
  if (Date.parse(credential.expiresAt) - Date.now() < refreshBeforeMs)
    setCredential(await exchange(credential.linkToken));
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
  if (code !== 'token_expired') return response;
  setCredential(await exchange(current.linkToken));
  return send();
}

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
