import type { Api } from './exam-client';

/** The fields of the API's answers this check reads. */
interface Answer {
  id?: string;
  url?: string;
  token?: string;
  error?: { code: string };
}

/**
 * An answer link made through one API process and revoked through the other must be refused by both at once, its
 * exchange and the access token taken before the revocation alike (links live in the shared Redis). Returns the
 * problems found; none when the revocation held everywhere.
 */
export async function answerLinkRevocation(apis: Api[], apiKey: string): Promise<string[]> {
  const [one, two] = apis;
  const call = async (api: Api, method: string, route: string, bearer?: string, body?: unknown) => {
    const response = await fetch(`${api.url}${route}`, {
      method,
      headers: {
        ...(bearer ? { authorization: `Bearer ${bearer}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    return { status: response.status, json: (text ? JSON.parse(text) : {}) as Answer };
  };
  const session = await call(one, 'POST', '/v1/sessions', apiKey);
  if (session.status !== 201) return [`answer link: creating a session answered ${session.status}`];
  const sessionId = String(session.json.id);
  const link = await call(one, 'POST', `/v1/sessions/${sessionId}/links`, apiKey, { checkpoints: 'question*' });
  if (link.status !== 201) return [`answer link: creating it on ${one.name} answered ${link.status}`];
  const token = new URL(String(link.json.url)).hash.replace(/^#link=/, '');
  const exchanged = await call(two, 'POST', '/v1/links/exchange', undefined, { token });
  if (exchanged.status !== 201) return [`answer link: exchanging it on ${two.name} answered ${exchanged.status}`];
  const access = String(exchanged.json.token);
  const problems: string[] = [];
  const read = await call(one, 'GET', `/v1/sessions/${sessionId}`, access);
  if (read.status !== 200)
    problems.push(`answer link: its access token read the session on ${one.name} with ${read.status}`);
  const revoked = await call(two, 'DELETE', `/v1/sessions/${sessionId}/links/${String(link.json.id)}`, apiKey);
  if (revoked.status !== 204) problems.push(`answer link: revoking it on ${two.name} answered ${revoked.status}`);
  for (const api of [one, two]) {
    const again = await call(api, 'POST', '/v1/links/exchange', undefined, { token });
    const used = await call(api, 'GET', `/v1/sessions/${sessionId}`, access);
    for (const [what, answer] of [
      ['exchange', again],
      ['access token', used],
    ] as const) {
      const code = answer.json.error?.code;
      if (answer.status !== 401 || code !== 'link_revoked')
        problems.push(
          `answer link: after the revocation, its ${what} on ${api.name} answered ${answer.status} ${code}`,
        );
    }
  }
  await call(one, 'DELETE', `/v1/sessions/${sessionId}`, apiKey);
  return problems;
}
