import dns from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import net from 'node:net';
import { addAbortSignal, pipeline, type Readable, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { deadlineSignal } from '../../deadline-signal';
import { defineTool, ToolError, Type, type RegisteredTool, type ToolOutput } from '../define-tool';
import { isPublicAddress, matchHost, parseHostPattern, type HostPattern } from '../host-patterns';

export interface HttpFetchOptions {
  /** SKILLFLOW_HTTP_FETCH_HOSTS: nothing is fetched from a host that is not on it. */
  hosts: string[];
  maxBytes: number;
  timeoutMs: number;
  /** How names are resolved (tests); default: the system resolver. */
  resolve?: (host: string) => Promise<string[]>;
  /** The certificates TLS trusts instead of the system's (tests). */
  ca?: string;
}

const maxRedirects = 5;
const textTypes =
  /^(text\/[a-z0-9.+-]+|application\/([a-z0-9.-]+\+)?(json|xml)|application\/(javascript|ecmascript|x-www-form-urlencoded|x-ndjson|yaml|x-yaml|toml|csv|rss\+xml|atom\+xml))$/;

const systemResolve = async (host: string) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * http_fetch: GET a text page from an allow-listed host. Safe by default: the list is empty until an operator fills it;
 * only http(s) on the listed host and port; every address a listed name resolves to must be public, and the request
 * connects to exactly the address that was checked (no second lookup a DNS rebinding could answer differently);
 * redirects are followed only onto the list and never from https to http (each hop checked the same way, at most 5);
 * only text is returned, at most `maxBytes` of it (decompressed), within `timeoutMs` for the whole call whatever the
 * server sends or withholds.
 */
export function createHttpFetch(options: HttpFetchOptions): RegisteredTool {
  const patterns = options.hosts
    .map((entry) => parseHostPattern(entry))
    .filter((pattern): pattern is HostPattern => pattern !== null);
  const listed =
    options.hosts.length > 0
      ? `Allowed hosts: ${options.hosts.join(', ')}.`
      : 'No host is allowed yet (an operator sets SKILLFLOW_HTTP_FETCH_HOSTS).';
  return defineTool({
    name: 'http_fetch',
    description:
      `Fetch a web page or API response as text with an HTTP GET. Only allow-listed hosts can be fetched. ${listed} ` +
      `Returns the status, the final URL, the content type and the body (text only, at most ${options.maxBytes} bytes).`,
    category: 'web',
    input: Type.Object(
      {
        url: Type.String({
          minLength: 8,
          maxLength: 2048,
          description: 'An http:// or https:// URL on an allowed host',
        }),
      },
      { additionalProperties: false },
    ),
    idempotent: true,
    timeout: options.timeoutMs + 5_000,
    retry: { maximumAttempts: 2 },
    async run({ url }, context) {
      const deadline = deadlineSignal(options.timeoutMs, [context.signal]);
      try {
        return await fetchText(url, patterns, options, deadline.signal);
      } catch (err) {
        if (err instanceof ToolError) throw err;
        if (deadline.signal.aborted && !context.signal.aborted)
          throw new ToolError(`http_fetch gave up on ${url} after ${options.timeoutMs} ms.`);
        throw err;
      } finally {
        deadline.clear();
      }
    },
  });
}

async function fetchText(
  start: string,
  patterns: HostPattern[],
  options: HttpFetchOptions,
  signal: AbortSignal,
): Promise<ToolOutput> {
  let url = parseUrl(start);
  for (let hop = 0; ; hop++) {
    const address = await checkedAddress(url, patterns, options);
    const response = await get(url, address, signal, options.ca);
    const location = response.headers.location;
    if (response.statusCode && response.statusCode >= 300 && response.statusCode < 400 && location) {
      // Its body is not read: closing the connection keeps a server from holding it open past the call.
      response.destroy();
      if (hop >= maxRedirects) throw new ToolError(`${start} redirects more than ${maxRedirects} times.`);
      const next = parseUrl(new URL(location, url).toString(), `${url} redirects to`);
      if (url.protocol === 'https:' && next.protocol === 'http:')
        throw new ToolError(
          `${url.href} redirects to ${next.href}: http_fetch does not follow a redirect from https to http.`,
        );
      url = next;
      continue;
    }
    return describe(url, response, await readText(response, options.maxBytes, signal));
  }
}

function parseUrl(text: string, context = 'The URL'): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ToolError(`${context} ${JSON.stringify(text)} is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ToolError(`${context} ${url.href}: only http and https URLs can be fetched.`);
  if (url.username || url.password)
    throw new ToolError(`${context} ${url.href}: URLs with credentials are not fetched.`);
  return url;
}

const defaultPort = (url: URL) => (url.protocol === 'https:' ? 443 : 80);

/** The one address this hop connects to, after the allow-list and the address rules. */
async function checkedAddress(url: URL, patterns: HostPattern[], options: HttpFetchOptions): Promise<string> {
  const port = url.port ? Number(url.port) : defaultPort(url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const pattern = matchHost(patterns, host, port, defaultPort(url));
  if (!pattern) {
    const allowed =
      patterns.length > 0
        ? `the allowed hosts are ${patterns.map((p) => `${p.subdomains ? '*.' : ''}${p.host}${p.port ? `:${p.port}` : ''}`).join(', ')}`
        : 'no host is allowed (SKILLFLOW_HTTP_FETCH_HOSTS is empty)';
    throw new ToolError(`${url.host} is not on http_fetch's allow-list: ${allowed}.`);
  }
  if (pattern.isAddress) return host;
  if (net.isIP(host) !== 0)
    throw new ToolError(
      `${url.host} is an address; only host names on the list, or addresses listed as such, are fetched.`,
    );
  let addresses: string[];
  try {
    addresses = await (options.resolve ?? systemResolve)(host);
  } catch (err) {
    throw new ToolError(
      `${host} could not be resolved (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}).`,
    );
  }
  const blocked = addresses.find((address) => !isPublicAddress(address));
  if (addresses.length === 0 || blocked !== undefined) {
    // Which private address it is stays with the operator: the model is not told what is inside the network.
    throw new ToolError(
      `${host} resolves to ${blocked === undefined ? 'no address' : 'an address that is not public'}; http_fetch does not reach private networks.`,
    );
  }
  return addresses[0];
}

function get(url: URL, address: string, signal: AbortSignal, ca: string | undefined): Promise<http.IncomingMessage> {
  const family = net.isIP(address);
  // Connect to the checked address whatever the name resolves to now; TLS still verifies the certificate for the name.
  const lookup: LookupFunction = (_host, lookupOptions, callback) => {
    if (lookupOptions.all)
      (callback as unknown as (err: null, addresses: Array<{ address: string; family: number }>) => void)(null, [
        { address, family },
      ]);
    else callback(null, address, family);
  };
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.get(
      url,
      {
        lookup,
        signal,
        ...(ca === undefined ? {} : { ca }),
        headers: {
          'user-agent': 'skillflow-http-fetch/1',
          accept: 'text/*, application/json, application/xml;q=0.9, */*;q=0.1',
          'accept-encoding': 'gzip, deflate, br',
        },
      },
      resolve,
    );
    request.on('error', (err) =>
      reject(
        signal.aborted
          ? (signal.reason ?? err)
          : new ToolError(`${url.href} could not be fetched: ${(err as NodeJS.ErrnoException).code ?? err.message}.`),
      ),
    );
  });
}

async function readText(
  response: http.IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ text: string; truncated: boolean; type: string }> {
  const type = (response.headers['content-type'] ?? 'text/plain').toLowerCase();
  const mime = type.split(';')[0].trim();
  if (!textTypes.test(mime)) {
    response.destroy();
    throw new ToolError(`The response is ${mime}, not text; http_fetch returns text only.`);
  }
  const encoding = (response.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  const decoders: Record<string, () => Transform> = {
    gzip: zlib.createGunzip,
    'x-gzip': zlib.createGunzip,
    deflate: zlib.createInflate,
    br: zlib.createBrotliDecompress,
  };
  if (encoding !== 'identity' && !decoders[encoding]) {
    response.destroy();
    throw new ToolError(`The response is encoded as ${encoding}, which http_fetch does not decode.`);
  }
  // pipeline, not pipe: either stream's end or destruction ends the other. The signal destroys the body the moment it
  // aborts, so a body that stops sending ends the read at the deadline, not at its next chunk.
  const decoded: Readable =
    encoding === 'identity' ? response : pipeline(response, decoders[encoding](), () => undefined);
  const body = addAbortSignal(signal, decoded);
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      const room = maxBytes - size;
      chunks.push(chunk.subarray(0, room));
      size += Math.min(room, chunk.length);
      if (chunk.length > room) {
        truncated = true;
        break;
      }
    }
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw new ToolError(`The response could not be read: ${(err as Error).message}.`);
  } finally {
    response.destroy();
  }
  if (signal.aborted) throw signal.reason;
  const charset = /charset="?([\w-]+)"?/.exec(type)?.[1] ?? 'utf-8';
  return { text: decoderFor(charset).decode(Buffer.concat(chunks)), truncated, type: mime };
}

function decoderFor(charset: string) {
  try {
    return new TextDecoder(charset);
  } catch {
    return new TextDecoder('utf-8');
  }
}

function describe(
  url: URL,
  response: http.IncomingMessage,
  body: { text: string; truncated: boolean; type: string },
): ToolOutput {
  const status = response.statusCode ?? 0;
  const head = `HTTP ${status} ${response.statusMessage ?? ''}`.trim();
  const note = body.truncated ? `\n\n[truncated: only the first part of the body is shown]` : '';
  const content = `${head}\nURL: ${url.href}\nContent-Type: ${body.type}\n\n${body.text}${note}`;
  return status >= 400 ? { content, isError: true } : content;
}
