import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';

/**
 * The prefix an IPv6 client is counted by: a site is given a /64 at least (RFC 6177), so one
 * machine can change its address within it at will.
 */
export const IPV6_BUDGET_PREFIX = 64;

/**
 * The name a client address is counted under: an IPv4 address as it is (IPv4-mapped IPv6 included),
 * an IPv6 address by its /64 (`2001:db8:aa:bb::/64`), and anything else (`unknown`) unchanged.
 */
export function addressBucket(address: string): string {
  const zone = address.indexOf('%');
  const bare = zone < 0 ? address : address.slice(0, zone);
  const version = isIP(bare);
  if (version === 4) return bare;
  if (version !== 6) return address;
  const parsed = ipaddr.IPv6.parse(bare);
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  const network = parsed.parts.map((part, index) => (index * 16 < IPV6_BUDGET_PREFIX ? part : 0));
  return `${new ipaddr.IPv6(network).toString()}/${IPV6_BUDGET_PREFIX}`;
}
