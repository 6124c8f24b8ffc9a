import { existsSync, mkdirSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parse, parseNumberAndBigInt } from 'lossless-json';
import { Browser, BrowserContext, Locator, Page, Response, chromium } from 'playwright-core';
import { expectedPlant } from './utils/bodies';
import { TestDatabase, testDatabases } from './utils/databases';
import { TestClient, TestProvider, TEST_AUDIENCE, signingKey, startTestProvider } from './utils/oidc-provider';
import { TestApp, bearer, startTestApp } from './utils/test-app';

/**
 * Swagger UI in a real browser, under the service's helmet Content-Security-Policy: authorize with a
 * bearer token, or with a client id and secret at the OpenID Provider (OAuth 2.0 client
 * credentials), then "Try it out" on GET /plants and read the live answer; and create, list and
 * delete an id beyond 2^53 through the page, which must send and show it exactly.
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

/** What a page did that a test of it forbids: CSP violations, errors, requests off loopback. */
interface PageWatch {
  /** CSP reports from the page itself (securitypolicyviolation events). */
  cspViolations: string[];
  /** Console messages that mention the Content Security Policy. */
  cspConsole: string[];
  pageErrors: string[];
  consoleErrors: string[];
  /** Anything but loopback is aborted, and listed here. */
  externalRequests: string[];
}

/** Chromium with one page that may reach loopback only, watched for what PageWatch lists. */
async function openPage(): Promise<{ browser: Browser; context: BrowserContext; page: Page; watch: PageWatch }> {
  const watch: PageWatch = {
    cspViolations: [],
    cspConsole: [],
    pageErrors: [],
    consoleErrors: [],
    externalRequests: [],
  };
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  context.setDefaultTimeout(STEP_TIMEOUT_MS);
  context.setDefaultNavigationTimeout(20_000);
  await context.route('**/*', (route) => {
    const { hostname } = new URL(route.request().url());
    if (hostname === '127.0.0.1' || hostname === 'localhost') return route.continue();
    watch.externalRequests.push(route.request().url());
    return route.abort();
  });
  await context.exposeFunction('__reportCspViolation', (report: string) => watch.cspViolations.push(report));
  // A string, not a function: the project compiles without the DOM library.
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => {
      window.__reportCspViolation(e.effectiveDirective + ' blocked ' + (e.blockedURI || '(inline)') +
        ' at ' + e.sourceFile + ':' + e.lineNumber);
    });`,
  });
  const page = await context.newPage();
  page.on('console', (msg) => {
    if (/content[- ]security[- ]policy/i.test(msg.text())) watch.cspConsole.push(msg.text());
    if (msg.type() === 'error') watch.consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => watch.pageErrors.push(err.message));
  return { browser, context, page, watch };
}

/** The operation block of one method and path, e.g. GET /plants. */
const operation = (page: Page, method: string, path: string): Locator =>
  page
    .locator(`.opblock.opblock-${method}`)
    .filter({ has: page.locator(`.opblock-summary-path[data-path="${path}"]`) });

/** Opens the operation's block if it is closed, and presses "Try it out". */
async function tryItOut(block: Locator): Promise<void> {
  if (!(await block.locator('.try-out__btn').isVisible())) await block.locator('.opblock-summary').first().click();
  await block.locator('.try-out__btn').click();
}

/** Presses Execute; the response to the request it sent to `path` (a path of the service). */
async function execute(page: Page, block: Locator, method: string, path: string): Promise<Response> {
  const sent = page.waitForResponse(
    (res) => res.request().method() === method && new URL(res.url()).pathname === path,
    { timeout: STEP_TIMEOUT_MS },
  );
  await block.locator('.btn.execute').click();
  return sent;
}

/** The live response as Swagger UI shows it: its status cell and, when there is one, its body panel. */
async function shownResponse(block: Locator, withBody: boolean): Promise<{ status: string; body?: string }> {
  const status = block.locator('.live-responses-table tbody td.response-col_status').first();
  await status.waitFor({ state: 'visible' });
  if (!withBody) return { status: (await status.innerText()).trim() };
  const body = block.locator('.live-responses-table tbody td.response-col_description .microlight').first();
  await body.waitFor({ state: 'visible' });
  return { status: (await status.innerText()).trim(), body: await body.innerText() };
}

/** Authorize: the token typed into the bearer field of the dialog. */
async function authorizeWithBearer(page: Page, token: string): Promise<void> {
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
}

/** Runs `steps`; if they fail, a screenshot of the page is left in test-artifacts/ first. */
async function screenshotOnFailure(page: Page, steps: () => Promise<void>): Promise<void> {
  try {
    await steps();
  } catch (err) {
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: FAILURE_SCREENSHOT, fullPage: true }).catch(() => undefined);
    throw err;
  }
}

describeWithBrowser()('Swagger UI in Chromium', () => {
  let t: TestApp | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let watch: PageWatch;
  let baseUrl: string;
  let token: string;
  let provider: TestProvider | undefined;

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

    ({ browser, context, page, watch } = await openPage());
  }, 90_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
    await provider?.stop();
  });

  /** GET /plants through Swagger UI: Try it out, Execute; the block and the response it sent for. */
  async function executeList(): Promise<{ list: Locator; response: Response }> {
    const list = operation(page, 'get', '/plants');
    await tryItOut(list);
    return { list, response: await execute(page, list, 'GET', '/plants') };
  }

  it('authorizes with a bearer token and lists the user\'s plants with "Try it out"', async () => {
    await screenshotOnFailure(page, async () => {
      const docs = await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      expect(docs?.status()).toBe(200);
      // The page really is served under the helmet policy this test is about.
      expect(docs?.headers()['content-security-policy']).toContain("script-src 'self'");

      await authorizeWithBearer(page, token);

      // GET /plants: expand, Try it out, Execute.
      const { list, response } = await executeList();
      expect(response.status()).toBe(200);
      expect(await response.request().headerValue('authorization')).toBe(`Bearer ${token}`);

      // The live response as Swagger UI shows it.
      const shown = await shownResponse(list, true);
      expect(shown.status).toBe('200');
      expect(shown.body).toContain(PLANT.name);
      expect(JSON.parse(shown.body!)).toEqual([PLANT]);
    });

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);

    // Swagger UI must work under the service's CSP, without errors and without leaving loopback.
    expect(watch.cspViolations).toEqual([]);
    expect(watch.cspConsole).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    expect(watch.externalRequests).toEqual([]);
  }, 90_000);
  it("authorizes with a client id and secret at the identity provider and lists the client's plants", async () => {
    await screenshotOnFailure(page, async () => {
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
    });
    expect(watch.cspViolations).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    expect(watch.externalRequests).toEqual([]);
  }, 90_000);
});

/** An id a double cannot hold: JSON.parse reads it as 9007199254740992. */
const BIG_ID = 9007199254740993n;

describeWithBrowser().each(testDatabases())('Swagger UI in Chromium, ids beyond 2^53, on %s', (database) => {
  let t: TestApp | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let watch: PageWatch;
  let baseUrl: string;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp(database as TestDatabase['name']);
    await t.reset();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    token = await t.token({ subject: 'ui-exact', name: 'Swagger UI int64' });
    ({ browser, context, page, watch } = await openPage());
  }, 90_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  /** The ids the database holds for the test's user, as decimal text: exact whatever the driver. */
  const storedIds = async (): Promise<string[]> => {
    const rows = (await t!.dataSource.query("SELECT id FROM plants WHERE owner = 'ui-exact' ORDER BY id")) as {
      id: unknown;
    }[];
    return rows.map((row) => String(row.id));
  };
  const exact = (text: string): unknown => parse(text, null, parseNumberAndBigInt);

  it('creates, lists and deletes plant 9007199254740993 with "Try it out", sending and showing it exactly', async () => {
    await screenshotOnFailure(page, async () => {
      await page.goto(`${baseUrl}/docs`, { waitUntil: 'load' });
      await authorizeWithBearer(page, token);

      // POST /plants: the body as typed, sent as typed.
      const typed = `{\n  "id": ${BIG_ID},\n  "name": "Exact Fern"\n}`;
      const create = operation(page, 'post', '/plants');
      await tryItOut(create);
      await create.locator('textarea.body-param__text').fill(typed);
      const created = await execute(page, create, 'POST', '/plants');
      expect(created.status()).toBe(200);
      expect(created.request().postData()).toBe(typed);
      const createdShown = await shownResponse(create, true);
      expect(createdShown.status).toBe('200');
      expect(exact(createdShown.body!)).toEqual(expectedPlant({ id: BIG_ID, name: 'Exact Fern' }));
      expect(await storedIds()).toEqual([String(BIG_ID)]);

      // GET /plants: the list as the page shows it.
      const list = operation(page, 'get', '/plants');
      await tryItOut(list);
      expect((await execute(page, list, 'GET', '/plants')).status()).toBe(200);
      const listShown = await shownResponse(list, true);
      expect(listShown.body).toContain(`"id": ${BIG_ID}`);
      expect(exact(listShown.body!)).toEqual([expectedPlant({ id: BIG_ID, name: 'Exact Fern' })]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await list
        .locator('.live-responses-table')
        .screenshot({ path: join(ARTIFACTS, `swagger-ui-int64-${database}.png`) });

      // DELETE /plants/{id}: the id typed into the path parameter.
      const remove = operation(page, 'delete', '/plants/{id}');
      await tryItOut(remove);
      await remove.locator('tr[data-param-name="id"] input').fill(String(BIG_ID));
      expect((await execute(page, remove, 'DELETE', `/plants/${BIG_ID}`)).status()).toBe(204);
      expect((await shownResponse(remove, false)).status).toBe('204');
      expect(await storedIds()).toEqual([]);
    });
    expect(watch.cspViolations).toEqual([]);
    expect(watch.pageErrors).toEqual([]);
    expect(watch.consoleErrors).toEqual([]);
    expect(watch.externalRequests).toEqual([]);
  }, 90_000);
});
