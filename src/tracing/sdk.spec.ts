import { Span } from '@opentelemetry/api';
import { IncomingMessage } from 'node:http';
import { nameByRoute, urlAttributes } from './sdk';

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
