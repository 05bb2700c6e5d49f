import { SkillflowClient } from '../lib/client';

/** Browsers refuse `fetch` called as a method of another object ("Illegal invocation"); Node does not, so it is simulated. */
describe('the client without a fetch of its own', () => {
  const original = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = original;
  });

  it('calls the global fetch as a plain function, as browsers require', async () => {
    const calls: string[] = [];
    globalThis.fetch = function (this: unknown, input: string | URL | Request) {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
      calls.push(String(input));
      return Promise.resolve(Response.json({ id: 'session-1' }, { status: 201 }));
    } as typeof fetch;
    const client = new SkillflowClient({ baseUrl: 'http://api.test/', apiKey: 'key' });
    await expect(client.createSession()).resolves.toEqual({ id: 'session-1' });
    expect(calls).toEqual(['http://api.test/v1/sessions']);
  });
});
