import express from 'express';
import helmet from 'helmet';
import request from 'supertest';
import { helmetHeaders, helmetOptions } from './security-headers';

describe(helmetHeaders.name, () => {
  it.each([
    ['without an identity provider', undefined],
    ['with an identity provider', { issuer: 'https://id.example.com/realms/x' }],
  ])('lists exactly the headers helmet itself sets on a response, %s', async (_label, oidc) => {
    const options = helmetOptions(oidc as never);
    const app = express().use(helmet(options));
    app.get('/', (_req, res) => void res.end());
    const res = await request(app).get('/');
    const listed = helmetHeaders(options);
    expect(listed.length).toBeGreaterThan(10);
    for (const [name, value] of listed) expect(res.headers[name.toLowerCase()]).toBe(value);
  });

  it('lets Swagger UI fetch tokens from the identity provider, and nothing else', () => {
    const csp = (oidc?: { issuer: string }) =>
      new Map(helmetHeaders(helmetOptions(oidc as never))).get('Content-Security-Policy');
    expect(csp()).toContain("connect-src 'self'");
    expect(csp({ issuer: 'https://id.example.com/realms/x' })).toContain("connect-src 'self' https://id.example.com");
  });
});
