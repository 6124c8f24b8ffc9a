import express, { Request } from 'express';
import request from 'supertest';
import { routeTemplate } from './route-template';

const withRoute = (route: unknown) => ({ route }) as unknown as Request;

describe(routeTemplate.name, () => {
  it.each([
    ['/plants', '/plants'],
    ['/plants/:id', '/plants/{id}'],
    ['/users/:userId/plants/:plantId', '/users/{userId}/plants/{plantId}'],
    ['/health/live', '/health/live'],
    ['/', '/'],
  ])('writes the Express route %s as %s', (path, template) => {
    expect(routeTemplate(withRoute({ path }))).toBe(template);
  });

  it('is undefined when no route matched', () => {
    expect(routeTemplate(withRoute(undefined))).toBeUndefined();
    expect(routeTemplate({} as Request)).toBeUndefined();
  });

  it('is undefined for a route whose path is not a string (a pattern)', () => {
    expect(routeTemplate(withRoute({ path: /^\/plants\/\d+$/ }))).toBeUndefined();
    expect(routeTemplate(withRoute({}))).toBeUndefined();
  });

  it('never returns the raw path of the request', async () => {
    const app = express();
    const seen: Array<string | undefined> = [];
    app.delete('/plants/:id', (req, res) => {
      seen.push(routeTemplate(req));
      res.status(204).end();
    });
    app.use((req, res) => {
      seen.push(routeTemplate(req));
      res.status(404).end();
    });
    await request(app).delete('/plants/123');
    await request(app).get('/nowhere/123');
    expect(seen).toEqual(['/plants/{id}', undefined]);
  });

  it('is undefined for an unknown path behind a middleware mounted as a wildcard route', async () => {
    // A middleware applied with forRoutes('*path') is the Express route `/{*path}`, so that route
    // is the request's route until (and unless) a handler's route matches.
    const app = express();
    const seen: Array<string | undefined> = [];
    app.all('/{*path}', (req, res, next) => {
      res.on('finish', () => seen.push(routeTemplate(req)));
      next();
    });
    app.delete('/plants/:id', (_req, res) => {
      res.status(204).end();
    });
    app.use((_req, res) => {
      res.status(404).end();
    });
    await request(app).delete('/plants/123');
    await request(app).get('/nowhere/123');
    expect(seen).toEqual(['/plants/{id}', undefined]);
  });
});
