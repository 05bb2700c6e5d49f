import os from 'node:os';
import { runCli } from '../cli/skillflow';
import { connect, ConnectionSettingError } from '../cli/connect';

function captured(env: Record<string, string | undefined>) {
  const out = { stdout: '', stderr: '' };
  const io = {
    stdout: (t: string) => (out.stdout += t),
    stderr: (t: string) => (out.stderr += t),
    env,
    cwd: os.tmpdir(),
  };
  return { io, out };
}

describe('the API address the CLI talks to', () => {
  it.each([
    ['unset', undefined, 'http://127.0.0.1:3000'],
    ['http', 'http://api.example.com:3000', 'http://api.example.com:3000'],
    ['https with a path', 'https://example.com/skillflow', 'https://example.com/skillflow'],
  ])('%s is used as given', (_name, value, expected) => {
    expect(connect({ SKILLFLOW_URL: value, SKILLFLOW_API_KEY: 'k' }, os.tmpdir()).url).toBe(expected);
  });

  it.each([
    ['localhost:3000', 'SKILLFLOW_URL=http://localhost:3000'],
    ['127.0.0.1:3000', 'SKILLFLOW_URL=http://127.0.0.1:3000'],
    ['api.example.com', 'SKILLFLOW_URL=http://api.example.com'],
    ['ftp://api.example.com', 'SKILLFLOW_URL=http://api.example.com'],
  ])('%s, without an http(s) scheme, is refused with the value to write', (value, fix) => {
    expect(() => connect({ SKILLFLOW_URL: value }, os.tmpdir())).toThrow(ConnectionSettingError);
    expect(() => connect({ SKILLFLOW_URL: value }, os.tmpdir())).toThrow(
      `is not an http(s) URL. Write it with its scheme, for example ${fix}.`,
    );
  });

  it.each([['chat'], ['inbox'], ['runs', 'show', 'turn-1'], ['answer', 'turn-1', 'setup', '--approve']])(
    '`skillflow %s` says so and exits 2 instead of reporting an API that does not answer',
    async (...argv) => {
      const { io, out } = captured({ SKILLFLOW_URL: 'localhost:3000', SKILLFLOW_API_KEY: 'k' });
      expect(await runCli(argv, io)).toBe(2);
      expect(out.stderr).toBe(
        'skillflow: SKILLFLOW_URL="localhost:3000" is not an http(s) URL. Write it with its scheme, for example SKILLFLOW_URL=http://localhost:3000.\n',
      );
    },
  );
});
