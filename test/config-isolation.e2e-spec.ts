import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as TestAppModule from './utils/test-app';

/**
 * Tests run on the configuration they are given. A developer's `.env` (here, one in the working
 * directory while the app's modules are first loaded) changes nothing, and nothing is written to
 * `process.env`.
 */
describe('Test app configuration', () => {
  const cwd = process.cwd();
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'plant-store-dotenv-'));
    writeFileSync(join(dir, '.env'), 'PLANTS_MAX_PAGE=2\nRATE_LIMIT_PER_MINUTE=1\nLOG_LEVEL=debug\n');
    process.chdir(dir);
  });
  afterAll(() => {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
  });

  it('ignores a .env in the working directory and leaves process.env alone', async () => {
    const before = { ...process.env };
    await jest.isolateModulesAsync(async () => {
      // Loaded here, after the .env exists, as a first import in a developer's checkout would be.
      const { bearer, startTestApp } = (await import('./utils/test-app')) as typeof TestAppModule;
      const t = await startTestApp('sqlite');
      try {
        const token = await t.token({ subject: 'dotenv' });
        for (const id of [1, 2, 3]) {
          const res = await t
            .http()
            .post('/plants')
            .set(bearer(token))
            .set('Content-Type', 'application/json')
            .send(`{"id":${id},"name":"P${id}"}`);
          expect(res.status).toBe(200);
        }
        // PLANTS_MAX_PAGE=2 and RATE_LIMIT_PER_MINUTE=1 from .env would cut this page and refuse these calls.
        const page = await t.http().get('/plants?limit=3').set(bearer(token));
        expect(page.status).toBe(200);
        expect(page.body).toHaveLength(3);
      } finally {
        await t.close();
      }
    });
    expect(process.env).toEqual(before);
  });
});
