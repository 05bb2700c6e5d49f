import net from 'node:net';

/**
 * What a per-address limit counts against: an IPv4 address as it is, an IPv6 address by its /64. One subscriber
 * (one home, one cloud instance) is routinely given a whole /64, so a limit per IPv6 address would count each of its
 * 2^64 addresses apart.
 */
export function addressBucketOf(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  const bare = address.split('%')[0];
  return net.isIPv6(bare) ? `${firstHalfOf(bare)}::/64` : address;
}

/** The first four groups of a valid IPv6 address, without leading zeros: `2001:db8:0:1`. */
function firstHalfOf(address: string): string {
  const [head, tail] = address.toLowerCase().split('::');
  const headGroups = head ? head.split(':') : [];
  if (tail === undefined) return canonical(headGroups.slice(0, 4));
  const tailGroups = tail ? tail.split(':') : [];
  // A trailing dotted IPv4 part stands for two groups.
  const width = (groups: string[]) => groups.reduce((sum, group) => sum + (group.includes('.') ? 2 : 1), 0);
  const zeros = Array.from({ length: 8 - width(headGroups) - width(tailGroups) }, () => '0');
  return canonical([...headGroups, ...zeros, ...tailGroups].slice(0, 4));
}

const canonical = (groups: string[]) => groups.map((group) => parseInt(group, 16).toString(16)).join(':');
