import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from './version';

describe('VERSION', () => {
  it("is the package's version", () => {
    const { version } = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(version);
  });
});
