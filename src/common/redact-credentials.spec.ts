import { redactCredentials } from './redact-credentials';

describe(redactCredentials.name, () => {
  it.each([
    ['mysql://app:hunter2@db:3306/plants', 'mysql://***@db:3306/plants'],
    ['mariadb://root@127.0.0.1:1/x', 'mariadb://***@127.0.0.1:1/x'],
    ['postgres://app:p@ss@db/plants', 'postgres://***@db/plants'],
    [
      'redis+sentinel://:hunter2@h1:26379/mymaster?sentinelPassword=swordfish',
      'redis+sentinel://***@h1:26379/mymaster?sentinelPassword=***',
    ],
    [
      'Cannot connect to mysql://app:hunter2@db/plants: connect ECONNREFUSED',
      'Cannot connect to mysql://***@db/plants: connect ECONNREFUSED',
    ],
    ['host=db user=app password=hunter2 dbname=plants', 'host=db user=app password=*** dbname=plants'],
    ['password=hunter2', 'password=***'],
    ['db?user=app&password=hunter2&ssl=true', 'db?user=app&password=***&ssl=true'],
  ])('masks the credentials of %p', (text, masked) => {
    expect(redactCredentials(text)).toBe(masked);
    expect(redactCredentials(text)).not.toMatch(/hunter2|swordfish/);
  });

  it.each([
    'connect ECONNREFUSED 127.0.0.1:3306',
    "Access denied for user 'app'@'10.0.0.5' (using password: YES)",
    'https://example.com/hooks',
    'getaddrinfo ENOTFOUND db',
  ])('leaves %p as it is', (text) => {
    expect(redactCredentials(text)).toBe(text);
  });
});
