import { Span } from '@opentelemetry/api';
import { IncomingMessage } from 'node:http';
import { finishServerSpan, nameByRoute, startAttributes, urlAttributes } from './sdk';

const TOKEN = `pst_${'A'.repeat(43)}`;

describe(urlAttributes.name, () => {
  it.each([
    ['/plants', { 'url.path': '/plants' }],
    ['/plants?limit=20&after=5', { 'url.path': '/plants', 'url.query': 'limit=20&after=5' }],
    ['/plants?', { 'url.path': '/plants' }],
    [`/x/${TOKEN}?access_token=${TOKEN}`, { 'url.path': '/x/[redacted]', 'url.query': 'access_token=[redacted]' }],
  ])('%s', (url, expected) => {
    expect(urlAttributes(url)).toEqual(expected);
  });
});

describe(nameByRoute.name, () => {
  const fakeSpan = () => ({ setAttribute: jest.fn(), updateName: jest.fn() });

  it('names the span by the route template and records it', () => {
    const span = fakeSpan();
    const request = { method: 'DELETE', route: { path: '/plants/:id' } } as unknown as IncomingMessage;
    nameByRoute(span as unknown as Span, request);
    expect(span.updateName).toHaveBeenCalledWith('DELETE /plants/{id}');
    expect(span.setAttribute).toHaveBeenCalledWith('http.route', '/plants/{id}');
  });

  it('leaves a request that matched no route as it is (the method alone)', () => {
    const span = fakeSpan();
    nameByRoute(span as unknown as Span, { method: 'GET' } as IncomingMessage);
    expect(span.updateName).not.toHaveBeenCalled();
    expect(span.setAttribute).not.toHaveBeenCalled();
  });
});

describe(startAttributes.name, () => {
  const requestWith = (headers: Record<string, string>, url = '/plants') =>
    ({ url, headers, socket: { remoteAddress: '192.0.2.4' } }) as unknown as IncomingMessage;

  it('takes the client from the socket and the server from the Host header, not from forwarding headers', () => {
    const forged = {
      host: 'plants.example.com:8080',
      'x-forwarded-for': '203.0.113.77',
      'x-forwarded-host': 'forged.example',
      forwarded: 'for=anything;host=forged.example',
    };
    expect(startAttributes(requestWith(forged))).toEqual({
      'url.path': '/plants',
      'client.address': '192.0.2.4',
      'server.address': 'plants.example.com',
      'server.port': 8080,
      'user_agent.original': undefined,
    });
  });

  it.each([
    ['[::1]:3000', '::1', 3000],
    ['[::1]', '::1', undefined],
    ['plants.example.com', 'plants.example.com', undefined],
    ['plants.example.com:x', 'plants.example.com', undefined],
  ])('reads the Host header %s', (host, address, port) => {
    expect(startAttributes(requestWith({ host }))).toMatchObject({ 'server.address': address, 'server.port': port });
  });

  it('removes what the instrumentation would take from a Forwarded header when there is no Host header', () => {
    const attributes = startAttributes(requestWith({ forwarded: 'host=forged.example' }));
    expect(Object.keys(attributes)).toEqual(expect.arrayContaining(['server.address', 'server.port']));
    expect(attributes['server.address']).toBeUndefined();
  });

  it('redacts a token in the URL, the Host header or the User-Agent', () => {
    expect(
      startAttributes(
        requestWith({ host: `${TOKEN}.example`, 'user-agent': `cli/1 ${TOKEN}` }, `/x/${TOKEN}?t=${TOKEN}`),
      ),
    ).toMatchObject({
      'url.path': '/x/[redacted]',
      'url.query': 't=[redacted]',
      'server.address': '[redacted].example',
      'user_agent.original': 'cli/1 [redacted]',
    });
  });
});

describe(finishServerSpan.name, () => {
  it("sets the client address the log line and the rate limit use: Express's req.ip once it has the request", () => {
    const span = { setAttribute: jest.fn(), updateName: jest.fn() };
    const request = {
      method: 'GET',
      headers: { 'x-forwarded-for': '203.0.113.77' },
      socket: { remoteAddress: '127.0.0.1' },
      // What Express's req.ip gives when TRUST_PROXY trusts the socket's address.
      ip: '203.0.113.77',
      route: { path: '/plants' },
    } as unknown as IncomingMessage;
    finishServerSpan(span as unknown as Span, request);
    expect(span.setAttribute).toHaveBeenCalledWith('client.address', '203.0.113.77');
    expect(span.updateName).toHaveBeenCalledWith('GET /plants');
  });
});
