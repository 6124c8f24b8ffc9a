import { MAX_LOGGED_PATH, loggedPath, redactTokens, redactUrl } from './redact-tokens';

const TOKEN = `pst_${'A'.repeat(43)}`;
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl';

describe(redactTokens.name, () => {
  it.each([
    ['/plants/123', '/plants/123'],
    ['/health/live', '/health/live'],
    [`/plants/${TOKEN}`, '/plants/[redacted]'],
    [`/x/${JWT}/y`, '/x/[redacted]/y'],
    [`access_token=${TOKEN}&limit=5`, 'access_token=[redacted]&limit=5'],
    [`client/1 (${TOKEN.toUpperCase()})`, 'client/1 ([redacted])'],
    // Percent-encoded characters of a token, as equivalent in a URL as they are written plainly.
    [`/plants/pst%5F${'A'.repeat(43)}`, '/plants/[redacted]'],
    [`/plants/pst%5fAAAA%2DBBBB%41/x`, '/plants/[redacted]/x'],
    [`/x/${JWT.replaceAll('.', '%2E')}`, '/x/[redacted]'],
    [`access_token=%70st_${'A'.repeat(43)}`, 'access_token=[redacted]'],
    // Other escapes are left as they came when there is no token.
    ['/plants/caf%C3%A9%2Dau%20lait', '/plants/caf%C3%A9%2Dau%20lait'],
  ])('%s', (text, expected) => {
    expect(redactTokens(text)).toBe(expected);
  });
});

describe(loggedPath.name, () => {
  it('drops the query and redacts tokens', () => {
    expect(loggedPath(`/plants/${TOKEN}?access_token=${TOKEN}`)).toBe('/plants/[redacted]');
    expect(loggedPath('/plants?limit=5')).toBe('/plants');
  });

  it(`cuts a path longer than ${MAX_LOGGED_PATH} characters`, () => {
    expect(loggedPath(`/${'a'.repeat(1000)}`)).toBe(`/${'a'.repeat(MAX_LOGGED_PATH - 1)}…`);
  });
});

describe(redactUrl.name, () => {
  it.each([
    ['https://id.example.com/realms/plants', 'https://id.example.com/realms/plants'],
    ['http://127.0.0.1:9', 'http://127.0.0.1:9'],
    ['https://hooks.example.com/in?key=s3cret', 'https://hooks.example.com/in?[redacted]'],
    ['https://user:s3cret@hooks.example.com:8443/in', 'https://[redacted]@hooks.example.com:8443/in'],
    ['https://hooks.example.com/in#s3cret', 'https://hooks.example.com/in#[redacted]'],
    [`https://[2001:db8::1]/${TOKEN}?k=s3cret`, 'https://[2001:db8::1]/[redacted]?[redacted]'],
    [`not a url ${TOKEN}`, '[redacted]'],
  ])('%s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
