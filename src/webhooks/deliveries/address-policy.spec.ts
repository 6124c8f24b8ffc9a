import {
  AddressPolicy,
  forbiddenRange,
  HostLookup,
  parseWebhookUrl,
  RefusedUrlError,
  resolveWebhookAddress,
  UnresolvedHostError,
} from './address-policy';

const strict: AddressPolicy = { allowHttp: false, allowPrivate: false };
const lenient: AddressPolicy = { allowHttp: true, allowPrivate: true };

const answering =
  (...addresses: string[]): HostLookup =>
  () =>
    Promise.resolve(addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

const refused = (message: string | RegExp) =>
  expect.objectContaining({
    name: 'RefusedUrlError',
    message: typeof message === 'string' ? message : expect.stringMatching(message),
  });

const FORBIDDEN: [address: string, range: string][] = [
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['::', 'unspecified'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['::1', 'loopback'],
  ['10.0.0.5', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['169.254.0.1', 'link-local'],
  ['fe80::1', 'link-local'],
  ['febf::1', 'link-local'],
  ['100.64.0.1', 'CGNAT'],
  ['100.127.255.255', 'CGNAT'],
  ['169.254.169.254', 'metadata'],
  ['fd00:ec2::254', 'metadata'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['ff02::1', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['2001:db8::1', 'documentation'],
  ['192.0.0.8', 'IETF protocol'],
  ['192.88.99.1', '6to4 relay'],
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::10.0.0.5', 'private'],
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:192.168.0.1', 'private'],
  ['::10.0.0.5', 'private'],
  ['::8.8.8.8', 'IPv4-compatible'],
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['2002:7f00:1::1', '6to4'],
  ['2002:5db8:d70e::1', '6to4'],
  ['fec0::1', 'reserved'],
  ['100::1', 'discard-only'],
];

const PUBLIC = ['93.184.215.14', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:93.184.215.14'];

describe('parseWebhookUrl', () => {
  it('accepts an https URL and returns it parsed', () => {
    const url = parseWebhookUrl('https://hooks.example.com:8443/in?team=1', strict);
    expect(url.hostname).toBe('hooks.example.com');
    expect(url.port).toBe('8443');
  });

  it('refuses http unless the policy allows it, and any other protocol always', () => {
    expect(() => parseWebhookUrl('http://hooks.example.com/', strict)).toThrow(refused('url must use https'));
    expect(parseWebhookUrl('http://hooks.example.com/', lenient).protocol).toBe('http:');
    expect(() => parseWebhookUrl('ftp://hooks.example.com/', lenient)).toThrow(refused('url must use http or https'));
    expect(() => parseWebhookUrl('file:///etc/passwd', strict)).toThrow(RefusedUrlError);
  });

  it('refuses credentials in the URL', () => {
    for (const raw of ['https://user@hooks.example.com/', 'https://user:pw@hooks.example.com/', 'https://:pw@a.b/']) {
      expect(() => parseWebhookUrl(raw, strict)).toThrow(refused('url must not contain a username or password'));
    }
  });

  it('refuses a fragment, even an empty one', () => {
    for (const raw of ['https://hooks.example.com/#x', 'https://hooks.example.com/#']) {
      expect(() => parseWebhookUrl(raw, strict)).toThrow(refused('url must not contain a fragment'));
    }
  });

  it('refuses what is not an absolute URL', () => {
    for (const raw of ['', 'hooks.example.com/in', '/in', 'https://', 'https://exa mple.com/']) {
      expect(() => parseWebhookUrl(raw, strict)).toThrow(refused('url must be an absolute URL'));
    }
  });

  it('refuses a URL over 2048 characters, raw or once normalised', () => {
    const base = 'https://hooks.example.com/';
    expect(parseWebhookUrl(base + 'a'.repeat(2048 - base.length), strict).href).toHaveLength(2048);
    expect(() => parseWebhookUrl(base + 'a'.repeat(2049 - base.length), strict)).toThrow(
      refused('url must be at most 2048 characters'),
    );
    // Each space becomes %20 in the parsed URL.
    expect(() => parseWebhookUrl(base + ' '.repeat(1000) + 'x', strict)).toThrow(
      refused('url must be at most 2048 characters'),
    );
  });
});

describe('forbiddenRange', () => {
  it.each(FORBIDDEN)('names %s as %s', (address, range) => {
    expect(forbiddenRange(address)).toBe(range);
  });

  it.each(PUBLIC)('lets the public address %s through', (address) => {
    expect(forbiddenRange(address)).toBeUndefined();
  });

  it('judges an address with a zone without the zone', () => {
    expect(forbiddenRange('fe80::1%eth0')).toBe('link-local');
    expect(forbiddenRange('::ffff:127.0.0.1%eth0')).toBe('loopback');
  });

  it('refuses what is not an IP address', () => {
    expect(forbiddenRange('example.com')).toBe('invalid');
    expect(forbiddenRange('')).toBe('invalid');
  });
});

describe('resolveWebhookAddress', () => {
  const neverCalled: HostLookup = () => Promise.reject(new Error('no lookup expected for an IP literal'));
  const literal = (address: string) => new URL(address.includes(':') ? `https://[${address}]/` : `https://${address}/`);

  it.each(FORBIDDEN)('refuses the literal %s (%s)', async (address, range) => {
    await expect(resolveWebhookAddress(literal(address), strict, neverCalled)).rejects.toEqual(
      refused(new RegExp(`^url resolves to \\S+, an? ${range} address$`)),
    );
  });

  it.each(FORBIDDEN)('refuses a host that resolves to %s (%s)', async (address, range) => {
    await expect(
      resolveWebhookAddress(new URL('https://hooks.example.com/'), strict, answering(address)),
    ).rejects.toEqual(refused(`url resolves to ${address}, ${/^[aeiouI]/.test(range) ? 'an' : 'a'} ${range} address`));
  });

  it.each(FORBIDDEN)('accepts %s when private addresses are allowed', async (address) => {
    await expect(
      resolveWebhookAddress(new URL('https://hooks.example.com/'), lenient, answering(address)),
    ).resolves.toEqual({ address, family: address.includes(':') ? 6 : 4 });
  });

  it.each(PUBLIC)('accepts the public address %s, literal or resolved', async (address) => {
    const family = address.includes(':') ? 6 : 4;
    await expect(
      resolveWebhookAddress(new URL('https://hooks.example.com/'), strict, answering(address)),
    ).resolves.toEqual({ address, family });
    const checked = await resolveWebhookAddress(literal(address), strict, neverCalled);
    expect(checked.family).toBe(family);
  });

  it('takes the literal host as written once the URL has normalised it', async () => {
    await expect(resolveWebhookAddress(new URL('https://[2606:4700::1111]/'), strict, neverCalled)).resolves.toEqual({
      address: '2606:4700::1111',
      family: 6,
    });
    // The URL parser turns the decimal, hex and octal spellings into dotted IPv4.
    for (const raw of ['https://2130706433/', 'https://0x7f.1/', 'https://0177.0.0.1/']) {
      await expect(resolveWebhookAddress(new URL(raw), strict, neverCalled)).rejects.toEqual(
        refused('url resolves to 127.0.0.1, a loopback address'),
      );
    }
  });

  it('refuses localhost through the system resolver', async () => {
    await expect(resolveWebhookAddress(new URL('https://localhost:3000/'), strict)).rejects.toEqual(
      refused(/^url resolves to (127\.0\.0\.1|::1), a loopback address$/),
    );
    const checked = await resolveWebhookAddress(new URL('https://localhost:3000/'), lenient);
    expect(forbiddenRange(checked.address)).toBe('loopback');
  });

  it('refuses an answer with any private address among public ones, wherever it is', async () => {
    const url = new URL('https://hooks.example.com/');
    await expect(resolveWebhookAddress(url, strict, answering('93.184.215.14', '10.0.0.5'))).rejects.toEqual(
      refused('url resolves to 10.0.0.5, a private address'),
    );
    await expect(resolveWebhookAddress(url, strict, answering('2606:4700::1111', '::1'))).rejects.toEqual(
      refused('url resolves to ::1, a loopback address'),
    );
  });

  it('returns the first address of the answer', async () => {
    await expect(
      resolveWebhookAddress(new URL('https://hooks.example.com/'), strict, answering('2606:4700::1111', '8.8.8.8')),
    ).resolves.toEqual({ address: '2606:4700::1111', family: 6 });
  });

  it('asks the lookup for the hostname only', async () => {
    const lookup = jest.fn(answering('8.8.8.8'));
    await resolveWebhookAddress(new URL('https://hooks.example.com:8443/in?x=1'), strict, lookup);
    expect(lookup).toHaveBeenCalledWith('hooks.example.com');
  });

  it('refuses a host that does not resolve, whatever the policy', async () => {
    const url = new URL('https://nothing.invalid/');
    const failing: HostLookup = () =>
      Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nothing.invalid'), { code: 'ENOTFOUND' }));
    for (const lookup of [failing, answering(), answering('not-an-address')]) {
      const resolved = resolveWebhookAddress(url, lenient, lookup);
      await expect(resolved).rejects.toBeInstanceOf(UnresolvedHostError);
      await expect(resolved).rejects.toThrow('url host nothing.invalid does not resolve');
    }
  });

  it('gives up on a lookup that does not answer in time, as a host that did not resolve', async () => {
    const silent: HostLookup = () => new Promise(() => undefined);
    const resolved = resolveWebhookAddress(new URL('https://slow.example.com/'), lenient, silent, 50);
    await expect(resolved).rejects.toBeInstanceOf(UnresolvedHostError);
    await expect(resolved).rejects.toThrow('url host slow.example.com did not resolve within 50 ms');
  });

  it('tells a refused answer apart from no answer: only the latter may pass on a later lookup', async () => {
    const resolved = resolveWebhookAddress(new URL('https://hooks.example.com/'), strict, answering('10.0.0.5'));
    await expect(resolved).rejects.toBeInstanceOf(RefusedUrlError);
    await expect(resolved).rejects.not.toBeInstanceOf(UnresolvedHostError);
  });
});
