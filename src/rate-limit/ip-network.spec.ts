import { addressBucket } from './ip-network';

describe(addressBucket.name, () => {
  it.each([
    ['an IPv4 address as it is', '192.0.2.44', '192.0.2.44'],
    ['an IPv4-mapped IPv6 address as IPv4', '::ffff:192.0.2.44', '192.0.2.44'],
    ['an IPv4-mapped IPv6 address written in hex as IPv4', '::ffff:c000:22c', '192.0.2.44'],
    ['an IPv6 address by its /64', '2001:db8:aa:bb:1:2:3:4', '2001:db8:aa:bb::/64'],
    ['an IPv6 address in capitals and compressed by the same /64', '2001:DB8:AA:BB::9', '2001:db8:aa:bb::/64'],
    ['an IPv6 address with a zone by its /64', 'fe80::1%eth0', 'fe80::/64'],
    ['an IPv6 address ending in dotted IPv4 by its /64', '2001:db8:0:1::192.0.2.1', '2001:db8:0:1::/64'],
    ['the IPv6 loopback by its /64', '::1', '::/64'],
    ['something that is no address unchanged', 'unknown', 'unknown'],
    ['an IPv4 address in a form no socket reports unchanged', '0x7f.1', '0x7f.1'],
  ])('names %s', (_label, address, bucket) => {
    expect(addressBucket(address)).toBe(bucket);
  });

  it('puts every address of a /64 in one bucket, and the next /64 in another', () => {
    expect(addressBucket('2001:db8:aa:bb::')).toBe(addressBucket('2001:db8:aa:bb:ffff:ffff:ffff:ffff'));
    expect(addressBucket('2001:db8:aa:bc::')).not.toBe(addressBucket('2001:db8:aa:bb::'));
  });
});
