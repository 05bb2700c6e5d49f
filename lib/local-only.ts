/**
 * With auth off, a server on loopback acts for whoever reaches it. Browsers reach it too: a page can point its own
 * domain name at 127.0.0.1 (DNS rebinding) and then call the server as a same-origin page, or post to it from its
 * origin. What refuses both: only requests addressed to a loopback name with the server's port (the Host header a
 * rebinding page cannot choose), and browser requests only from the server's own pages or origins named in a setting.
 */
export interface LocalOnly {
  /** The server, as messages name it: "the API", "the codec". */
  server: string;
  /** The setting that names origins trusted besides the server's own, and its origins (`*` excepted: not with auth off). */
  originsSetting: string;
  origins: string[];
  /** Whether Host is checked: when the server listens on loopback (SKILLFLOW_UNAUTHENTICATED_NETWORK=allow serves other names). */
  checkHost: boolean;
}

export interface LocalRequest {
  host: string | undefined;
  origin: string | undefined;
  /** The port the request came in on; undefined for requests injected without a connection (tests). */
  port: number | undefined;
}

export type LocalVerdict =
  { allowed: true } | { allowed: false; code: 'host_not_allowed' | 'origin_not_allowed'; message: string };

/** The names a browser on this machine reaches a loopback server by. */
export const loopbackNames = ['localhost', '127.0.0.1', '[::1]'] as const;

export function localOnlyOf(
  server: string,
  originsSetting: string,
  origins: string[],
  listensOnLoopback: boolean,
): LocalOnly {
  return { server, originsSetting, origins: origins.filter((origin) => origin !== '*'), checkHost: listensOnLoopback };
}

export function checkLocalRequest(policy: LocalOnly, request: LocalRequest): LocalVerdict {
  const host = request.host?.toLowerCase();
  const addressed = host === undefined ? undefined : hostAndPort(host);
  const portText = request.port === undefined ? '' : `:${request.port}`;
  if (policy.checkHost) {
    const loopback = addressed !== undefined && (loopbackNames as readonly string[]).includes(addressed.name);
    if (!loopback || (request.port !== undefined && addressed.port !== request.port)) {
      const names = loopbackNames.map((name) => name + portText).join(', ');
      return {
        allowed: false,
        code: 'host_not_allowed',
        message:
          `With SKILLFLOW_AUTH=off, ${policy.server} answers only requests addressed to ${names}; this one was addressed to ` +
          `${host === undefined ? 'no Host' : JSON.stringify(request.host)}, as a web page that points its own domain at this machine (DNS rebinding) would send. ` +
          `Use one of those addresses, or turn auth on (SKILLFLOW_AUTH=on) to serve other names.`,
      };
    }
  }
  if (request.origin === undefined || originAllowed(policy, request.origin, host, request.port))
    return { allowed: true };
  const trusted = policy.origins.length > 0 ? policy.origins.join(', ') : 'none';
  return {
    allowed: false,
    code: 'origin_not_allowed',
    message:
      `With SKILLFLOW_AUTH=off, ${policy.server} takes browser requests only from its own pages and from ${policy.originsSetting} (${trusted}), ` +
      `so that another site cannot act as the local operator; this one came from a page of ${JSON.stringify(request.origin)}. ` +
      `Add that origin to ${policy.originsSetting} if you trust it, or turn auth on (SKILLFLOW_AUTH=on).`,
  };
}

function originAllowed(policy: LocalOnly, origin: string, host: string | undefined, port: number | undefined): boolean {
  if (policy.origins.includes(origin)) return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false; // "null": a sandboxed frame or a file
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  // The server's own pages: the origin the request was addressed to (a TLS proxy in front makes it https).
  if (host !== undefined && url.host === host) return true;
  const { name, port: originPort } = hostAndPort(url.host, url.protocol === 'https:' ? 443 : 80);
  return port !== undefined && originPort === port && (loopbackNames as readonly string[]).includes(name);
}

/** `localhost:3000`, `[::1]:3000`, `127.0.0.1` (port 80). */
function hostAndPort(host: string, defaultPort = 80): { name: string; port: number } {
  const match = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(host);
  if (!match) return { name: host, port: NaN };
  return { name: match[1], port: match[2] === undefined ? defaultPort : Number(match[2]) };
}
