import { existsSync, mkdirSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Browser, BrowserContext, Locator, Page, Response, chromium } from 'playwright-core';
import { TestClient, TestProvider, TEST_AUDIENCE, signingKey, startTestProvider } from './utils/oidc-provider';
import { TestApp, bearer, startTestApp } from './utils/test-app';

/**
 * Swagger UI in a real browser, under the service's helmet Content-Security-Policy: authorize with a
 * bearer token, or with a client id and secret at the OpenID Provider (OAuth 2.0 client
 * credentials), then "Try it out" on GET /plants and read the live answer.
 *
 * The browser is Debian's chromium (`apt-get install chromium`); playwright-core never downloads one.
 * Without it the suite is skipped, unless TEST_REQUIRE_BROWSER=1 (set by CI) makes that a failure.
 */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = join(__dirname, '..', 'test-artifacts');
const SCREENSHOT = join(ARTIFACTS, 'swagger-ui.png');
const FAILURE_SCREENSHOT = join(ARTIFACTS, 'swagger-ui-failure.png');
const STEP_TIMEOUT_MS = 15_000;

const PLANT = { id: 4711, name: 'Swagger Monstera', tag: 'browser' };
const CLIENT_PLANT = { id: 4712, name: 'OAuth Fern', tag: 'browser' };
const CLIENT: TestClient = {
  client_id: 'swagger-client',
  client_secret: 'swagger-client-secret-0123456789abcdef',
  scope: 'plants:read plants:write',
};

function describeWithBrowser(): jest.Describe {
  if (existsSync(CHROMIUM)) return describe;
  if (process.env.TEST_REQUIRE_BROWSER === '1') {
    throw new Error(`TEST_REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (install it: apt-get install chromium)`);
  }
  console.warn(`Skipping the Swagger UI browser test: ${CHROMIUM} is missing (apt-get install chromium)`);
  return describe.skip;
}

describeWithBrowser()('Swagger UI in Chromium', () => {
  let t: TestApp | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let baseUrl: string;
  let token: string;
  let provider: TestProvider | undefined;

  /** CSP reports from the page itself (securitypolicyviolation events). */
  const cspViolations: string[] = [];
  /** Console messages that mention the Content Security Policy. */
  const cspConsole: string[] = [];
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  /** Anything but loopback is aborted, and listed here. */
  const externalRequests: string[] = [];

  beforeAll(async () => {
    provider = await startTestProvider({ keys: [await signingKey('ui-key')], clients: [CLIENT] });
    t = await startTestApp('sqlite', { OIDC_ISSUER: provider.issuer, OIDC_AUDIENCE: TEST_AUDIENCE });
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    baseUrl = `http://127.0.0.1:${port}`;

    const clientToken = await provider.token(CLIENT.client_id, CLIENT.scope);
    const clientCreated = await fetch(`${baseUrl}/plants`, {
      method: 'POST',
      headers: { ...bearer(clientToken), 'Content-Type': 'application/json' },
      body: JSON.stringify(CLIENT_PLANT),
    });
    expect(clientCreated.status).toBe(200);

    token = await t.token({ subject: 'ui-user', name: 'Swagger UI e2e' });
    const created = await fetch(`${baseUrl}/plants`, {
      method: 'POST',
      headers: { ...bearer(token), 'Content-Type': 'application/json' },
      body: JSON.stringify(PLANT),
    });
    expect(created.status).toBe(200);
    expect(await created.json()).toEqual(PLANT);

    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(20_000);
    await context.route('**/*', (route) => {
      const { hostname } = new URL(route.request().url());
      if (hostname === '127.0.0.1' || hostname === 'localhost') return route.continue();
      externalRequests.push(route.request().url());
      return route.abort();
    });
    await context.exposeFunction('__reportCspViolation', (report: string) => cspViolations.push(report));
    // A string, not a function: the project compiles without the DOM library.
    await context.addInitScript({
      content: `document.addEventListener('securitypolicyviolation', (e) => {
        window.__reportCspViolation(e.effectiveDirective + ' blocked ' + (e.blockedURI || '(inline)') +
          ' at ' + e.sourceFile + ':' + e.lineNumber);
      });`,
    });

    page = await context.newPage();
    page.on('console', (msg) => {
      if (/content[- ]security[- ]policy/i.test(msg.text())) cspConsole.push(msg.text());
      if (msg.type() === 'error') consoleErrors.push(msg.text());
    });
    page.on('pageerror', (err) => pageErrors.push(err.message));
  }, 90_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
    await provider?.stop();
  });

  /** The operation block of one method and path, e.g. GET /plants. */
  const operation = (method: string, path: string): Locator =>
    page
      .locator(`.opblock.opblock-${method}`)
      .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

  /** GET /plants through Swagger UI: Try it out, Execute; the block and the response it sent for. */
  async function executeList(): Promise<{ list: Locator; response: Response }> {
    const list = operation('get', '/plants');
    if (!(await list.locator('.try-out__btn').isVisible())) await list.locator('.opblock-summary').first().click();
    await list.locator('.try-out__btn').click();
    const sent = page.waitForResponse(
      (res) => res.request().method() === 'GET' && new URL(res.url()).pathname === '/plants',
      { timeout: STEP_TIMEOUT_MS },
    );
    await list.locator('.btn.execute').click();
    return { list, response: await sent };
  }

  it('authorizes with a bearer token and lists the user\'s plants with "Try it out"', async () => {
    try {
      const docs = await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      expect(docs?.status()).toBe(200);
      // The page really is served under the helmet policy this test is about.
      expect(docs?.headers()['content-security-policy']).toContain("script-src 'self'");

      // Authorize: type the token into the bearer field of the dialog.
      await page.locator('.auth-wrapper .btn.authorize').click();
      const dialog = page.locator('.dialog-ux .modal-ux');
      await dialog.waitFor({ state: 'visible' });
      const bearerForm = dialog.locator('.auth-container').filter({ hasText: '(http, Bearer)' });
      await bearerForm.locator('input[type="text"]').fill(token);
      await bearerForm.locator('.auth-btn-wrapper .btn.modal-btn.authorize').click();
      // Once authorized, the dialog offers Logout instead of Authorize.
      await bearerForm.locator('.auth-btn-wrapper button', { hasText: 'Logout' }).waitFor({ state: 'visible' });
      await dialog.locator('.close-modal').click();
      await dialog.waitFor({ state: 'hidden' });
      await page.locator('.auth-wrapper .btn.authorize.locked').waitFor({ state: 'visible' });

      // GET /plants: expand, Try it out, Execute.
      const { list, response } = await executeList();
      expect(response.status()).toBe(200);
      expect(await response.request().headerValue('authorization')).toBe(`Bearer ${token}`);

      // The live response as Swagger UI shows it.
      const status = list.locator('.live-responses-table tbody td.response-col_status').first();
      await status.waitFor({ state: 'visible' });
      expect((await status.innerText()).trim()).toBe('200');
      const body = list.locator('.live-responses-table tbody td.response-col_description .microlight').first();
      await body.waitFor({ state: 'visible' });
      const shown = await body.innerText();
      expect(shown).toContain(PLANT.name);
      expect(JSON.parse(shown)).toEqual([PLANT]);
    } catch (err) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: FAILURE_SCREENSHOT, fullPage: true }).catch(() => undefined);
      throw err;
    }

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);

    // Swagger UI must work under the service's CSP, without errors and without leaving loopback.
    expect(cspViolations).toEqual([]);
    expect(cspConsole).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(externalRequests).toEqual([]);
  }, 90_000);
  it("authorizes with a client id and secret at the identity provider and lists the client's plants", async () => {
    try {
      // A fresh page: nothing remembered from the bearer test.
      await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      await page.evaluate('localStorage.clear()');
      await page.reload({ waitUntil: 'load' });

      await page.locator('.auth-wrapper .btn.authorize').click();
      const dialog = page.locator('.dialog-ux .modal-ux');
      await dialog.waitFor({ state: 'visible' });
      const oauth = dialog.locator('.auth-container').filter({ hasText: 'clientCredentials' });
      await oauth.locator('input[id^="client_id"]').fill(CLIENT.client_id);
      await oauth.locator('input[id^="client_secret"]').fill(CLIENT.client_secret);
      await oauth.locator('a', { hasText: 'select all' }).click();
      const issued = page.waitForResponse((res) => res.url() === `${provider!.issuer}/token`, {
        timeout: STEP_TIMEOUT_MS,
      });
      await oauth.locator('.auth-btn-wrapper .btn.modal-btn.authorize').click();
      expect((await issued).status()).toBe(200);
      await oauth.locator('.auth-btn-wrapper button', { hasText: 'Logout' }).waitFor({ state: 'visible' });
      await dialog.locator('.close-modal').click();
      await dialog.waitFor({ state: 'hidden' });

      const { response } = await executeList();
      expect(response.status()).toBe(200);
      // A JWT from the provider, not the pst_ token.
      expect(await response.request().headerValue('authorization')).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      expect(await response.json()).toEqual([CLIENT_PLANT]);
    } catch (err) {
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: FAILURE_SCREENSHOT, fullPage: true }).catch(() => undefined);
      throw err;
    }
    expect(cspViolations).toEqual([]);
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(externalRequests).toEqual([]);
  }, 90_000);
});
