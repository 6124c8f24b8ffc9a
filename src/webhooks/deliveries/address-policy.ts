import { promises as dns } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { MAX_URL_LENGTH } from '../webhooks.limits';

/**
 * Webhook URLs are chosen by customers and called from inside our network, so without these checks
 * a subscription could make the service POST to the cloud metadata endpoint, the database or an
 * admin port on localhost (SSRF). Both switches are meant for development and tests.
 */
export interface AddressPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** A URL the policy refuses; the message is meant for the API client (a 400). */
export class RefusedUrlError extends Error {
  override readonly name = 'RefusedUrlError';
}

/**
 * The host gave no answer just now (no such name, the resolver failing, or no answer in time): the
 * next lookup may succeed, unlike the policy's other refusals.
 */
export class UnresolvedHostError extends RefusedUrlError {
  constructor(host: string, timeoutMs?: number) {
    super(
      timeoutMs === undefined
        ? `url host ${host} does not resolve`
        : `url host ${host} did not resolve within ${timeoutMs} ms`,
    );
  }
}

/** Checks the syntax only; whether the host may be contacted is decided by resolveWebhookAddress. */
export function parseWebhookUrl(raw: string, policy: AddressPolicy): URL {
  // Measured before parsing, so a huge string is not parsed at all, and after, as
  // percent-encoding and punycode can make the normalised form longer.
  if (raw.length > MAX_URL_LENGTH) throw new RefusedUrlError(`url must be at most ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RefusedUrlError('url must be an absolute URL');
  }
  if (url.href.length > MAX_URL_LENGTH) throw new RefusedUrlError(`url must be at most ${MAX_URL_LENGTH} characters`);
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    throw new RefusedUrlError(policy.allowHttp ? 'url must use http or https' : 'url must use https');
  }
  if (url.username !== '' || url.password !== '') {
    throw new RefusedUrlError('url must not contain a username or password');
  }
  // `hash` is empty for a bare trailing '#', which `href` keeps.
  if (url.href.includes('#')) throw new RefusedUrlError('url must not contain a fragment');
  if (url.hostname === '') throw new RefusedUrlError('url must have a host');
  return url;
}

type Range = readonly [name: string, cidrs: readonly string[]];

/**
 * Checked in order, so the narrower name wins (metadata inside link-local, broadcast inside
 * reserved). Each family has its own lists: a BlockList with an IPv4 rule also matches the
 * IPv4-mapped IPv6 form, and the embedded IPv4 of such forms is judged separately below.
 */
const IPV4_RANGES: readonly Range[] = [
  ['unspecified', ['0.0.0.0/8']],
  ['loopback', ['127.0.0.0/8']],
  ['metadata', ['169.254.169.254/32']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']],
  ['link-local', ['169.254.0.0/16']],
  ['CGNAT', ['100.64.0.0/10']],
  ['IETF protocol', ['192.0.0.0/24']],
  ['documentation', ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24']],
  ['6to4 relay', ['192.88.99.0/24']],
  ['benchmarking', ['198.18.0.0/15']],
  ['multicast', ['224.0.0.0/4']],
  ['broadcast', ['255.255.255.255/32']],
  ['reserved', ['240.0.0.0/4']],
];

const IPV6_RANGES: readonly Range[] = [
  ['unspecified', ['::/128']],
  ['loopback', ['::1/128']],
  ['metadata', ['fd00:ec2::254/128']],
  ['private', ['fc00::/7']],
  ['link-local', ['fe80::/10']],
  ['multicast', ['ff00::/8']],
  ['documentation', ['2001:db8::/32', '3fff::/20']],
  ['Teredo', ['2001::/32']],
  // The rest of the IETF protocol assignments (ORCHID, AMT, AS112 and others).
  ['IETF protocol', ['2001::/23']],
  // Judging the embedded IPv4 would not help: 6to4 is obsolete, and the relay is anyone's.
  ['6to4', ['2002::/16']],
  ['NAT64 local-use', ['64:ff9b:1::/48']],
  ['discard-only', ['100::/64']],
];

function blockList(cidrs: readonly string[], family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/');
    list.addSubnet(network, Number(prefix), family);
  }
  return list;
}

const IPV4_LISTS = IPV4_RANGES.map(([name, cidrs]) => [name, blockList(cidrs, 'ipv4')] as const);
const IPV6_LISTS = IPV6_RANGES.map(([name, cidrs]) => [name, blockList(cidrs, 'ipv6')] as const);
const GLOBAL_UNICAST_V6 = blockList(['2000::/3'], 'ipv6');

/**
 * Prefixes whose last 32 bits are the IPv4 address the packet in effect goes to. The well-known
 * NAT64 prefix is what DNS64 answers on IPv6-only networks, so a public IPv4 behind it is allowed.
 */
const EMBEDDING_V4 = blockList(['::ffff:0:0/96', '64:ff9b::/96'], 'ipv6');
// Deprecated, so nothing legitimate uses one; refused even around a public IPv4.
const IPV4_COMPATIBLE = blockList(['::/96'], 'ipv6');

/** The 16-bit groups of a valid IPv6 address (without zone), expanding '::' and a dotted tail. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::');
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  return tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

function embeddedV4(address: string): string {
  const groups = ipv6Groups(address);
  return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

/**
 * The name of the range that makes `ip` off limits for webhooks ('private', 'loopback',
 * 'metadata', ...), or undefined for a public unicast address. A string that is not an IP
 * address is off limits too ('invalid').
 */
export function forbiddenRange(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 4) return IPV4_LISTS.find(([, list]) => list.check(ip, 'ipv4'))?.[0];
  if (family !== 6) return 'invalid';
  // A zone (fe80::1%eth0) says nothing about the range, and would end up in an embedded IPv4.
  const address = ip.split('%')[0];
  // None of these overlaps the embedding prefixes but '::' and '::1', which must keep their names.
  const named = IPV6_LISTS.find(([, list]) => list.check(address, 'ipv6'))?.[0];
  if (named !== undefined) return named;
  if (EMBEDDING_V4.check(address, 'ipv6')) return forbiddenRange(embeddedV4(address));
  if (IPV4_COMPATIBLE.check(address, 'ipv6')) return forbiddenRange(embeddedV4(address)) ?? 'IPv4-compatible';
  return GLOBAL_UNICAST_V6.check(address, 'ipv6') ? undefined : 'reserved';
}

export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

export type HostLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemLookup: HostLookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

const article = (word: string) => (/^[aeiouAEIOU]/.test(word) ? 'an' : 'a');

/**
 * Resolves the URL's host and returns the address to connect to; the caller must connect to that
 * address (see sendWebhook) rather than resolve again, or the DNS answer could change in between.
 * Every address of the answer is checked: with one public and one private record, the one used
 * could otherwise be chosen by the attacker.
 */
export async function resolveWebhookAddress(
  url: URL,
  policy: AddressPolicy,
  lookup: HostLookup = systemLookup,
  timeoutMs = 10_000,
): Promise<CheckedAddress> {
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = (
        await Promise.race([
          lookup(host),
          new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new UnresolvedHostError(host, timeoutMs)), timeoutMs);
          }),
        ])
      ).map((answer) => answer.address);
    } catch (error) {
      if (error instanceof RefusedUrlError) throw error;
      addresses = [];
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0 || addresses.some((address) => isIP(address) === 0)) {
      throw new UnresolvedHostError(host);
    }
  }
  if (!policy.allowPrivate) {
    for (const address of addresses) {
      const range = forbiddenRange(address);
      if (range !== undefined) {
        throw new RefusedUrlError(`url resolves to ${address}, ${article(range)} ${range} address`);
      }
    }
  }
  return { address: addresses[0], family: isIP(addresses[0]) as 4 | 6 };
}
