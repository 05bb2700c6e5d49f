import net from 'node:net';

/**
 * http_fetch's allow-list: host patterns (SKILLFLOW_HTTP_FETCH_HOSTS) and the address rules that keep it from being
 * turned against the worker's own network. A host name on the list must resolve to public addresses only; an IP
 * address on the list is the operator naming that address, so it is allowed whatever range it is in.
 */
export interface HostPattern {
  /** Lowercase host name (without the `*.`) or IP address (IPv6 without brackets). */
  host: string;
  /** `*.example.com`: any subdomain of example.com (not example.com itself). */
  subdomains: boolean;
  /** null: only the scheme's default port (80, 443). */
  port: number | null;
  isAddress: boolean;
}

const hostName = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export function parseHostPattern(entry: string): HostPattern | null {
  const match = /^(\*\.)?(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(entry.toLowerCase());
  if (!match) return null;
  const [, star, rawHost, rawPort] = match;
  const host = rawHost.replace(/^\[|\]$/g, '');
  const port = rawPort === undefined ? null : Number(rawPort);
  if (port !== null && (port < 1 || port > 65535)) return null;
  const isAddress = net.isIP(host) !== 0;
  if (isAddress ? star !== undefined || rawHost.startsWith('[') !== net.isIPv6(host) : !hostName.test(host))
    return null;
  return { host, subdomains: star !== undefined, port, isAddress };
}

/** The pattern that lets this host and port through, or undefined. */
export function matchHost(
  patterns: HostPattern[],
  host: string,
  port: number,
  defaultPort: number,
): HostPattern | undefined {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return patterns.find((pattern) => {
    const hostMatches = pattern.subdomains ? bare.endsWith(`.${pattern.host}`) : bare === pattern.host;
    return hostMatches && (pattern.port === null ? port === defaultPort : port === pattern.port);
  });
}

// Two lists: a BlockList matches IPv4 addresses against IPv4-mapped IPv6 rules too.
const nonPublic4 = new net.BlockList();
const nonPublic6 = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  nonPublic4.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  nonPublic6.addSubnet(network, prefix, 'ipv6');

/** The IPv4 address an IPv6 address carries (mapped, translated, NAT64, 6to4), if any. */
function embeddedIPv4(address: string): string | null {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1];
  const groups = expandIPv6(address);
  if (!groups) return null;
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return v4(groups[6], groups[7]);
  if (groups.slice(0, 4).every((g) => g === 0) && groups[4] === 0xffff && groups[5] === 0)
    return v4(groups[6], groups[7]);
  if (groups[0] === 0x64 && groups[1] === 0xff9b) return v4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return v4(groups[1], groups[2]);
  return null;
}

function expandIPv6(address: string): number[] | null {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1].split('.').map(Number);
    text = text.slice(0, -dotted[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? left.length !== 8 : missing < 0) return null;
  return [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right].map((group) => parseInt(group, 16));
}

/** Whether an address is on the public internet: not loopback, private, link-local, CGNAT, multicast, reserved... */
export function isPublicAddress(address: string): boolean {
  // A zone index (fe80::1%eth0) names an interface of this host.
  if (address.includes('%')) return false;
  const family = net.isIP(address);
  if (family === 4) return !nonPublic4.check(address, 'ipv4');
  if (family !== 6) return false;
  // Mapped (::ffff:a.b.c.d), translated (::ffff:0:a.b.c.d), NAT64 and 6to4 addresses reach the IPv4 address they carry.
  const v4 = embeddedIPv4(address);
  if (v4 !== null) return isPublicAddress(v4);
  return !nonPublic6.check(address, 'ipv6');
}
