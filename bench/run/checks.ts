/**
 * Before anything is measured: the SQL each target sends for a list, a create and a delete (the
 * general query log), and the peers' answers to the same requests compared with the service's.
 */
import { traceStatements } from '../lib/db';
import { LIST_PATH } from '../lib/harness';
import { ParityCheck, TargetName, TraceEntry } from '../lib/types';
import type { Context } from './context';

/** One request, its status, body and the headers the contract fixes. */
export async function request(
  url: string,
  method: string,
  path: string,
  token?: string,
  body?: string,
): Promise<{ status: number; body: string; headers: Record<string, string> }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url + path, { method, headers, body });
  const text = await res.text();
  const pick: Record<string, string> = {};
  for (const h of ['content-type', 'link', 'www-authenticate']) {
    const v = res.headers.get(h);
    if (v !== null) pick[h] = v;
  }
  return { status: res.status, body: text, headers: pick };
}

export async function traceRequests(ctx: Context): Promise<TraceEntry[] | null> {
  const entries: TraceEntry[] = [];
  const token = ctx.tokens['bench-trace'];
  for (const target of ctx.targets) {
    const steps: [string, () => Promise<unknown>][] = [
      ['GET /plants?limit=20 (cold: first request of the token)', () => request(target.url, 'GET', LIST_PATH, token)],
      ['GET /plants?limit=20', () => request(target.url, 'GET', LIST_PATH, token)],
      ['POST /plants', () => request(target.url, 'POST', '/plants', token, '{"id":42,"name":"traced","tag":"t"}')],
      ['DELETE /plants/42', () => request(target.url, 'DELETE', '/plants/42', token)],
    ];
    for (const [label, step] of steps) {
      const statements = await traceStatements(ctx.conn, async () => void (await step()));
      if (statements === null) return null;
      entries.push({ target: target.name, request: label, statements: statements.map((s) => s.sql) });
    }
  }
  return entries;
}

export async function checkParity(ctx: Context): Promise<ParityCheck[]> {
  const t = ctx.tokens['bench-trace'];
  const big = '9223372036854775807';
  const steps: [string, string, string, string | undefined, string | undefined][] = [
    ['list, first page', 'GET', LIST_PATH, ctx.tokens['bench-list'], undefined],
    ['list, last page', 'GET', '/plants?limit=20&after=990', ctx.tokens['bench-list'], undefined],
    ['list, bad limit', 'GET', '/plants?limit=0&sort=x', ctx.tokens['bench-list'], undefined],
    ['create int64 max', 'POST', '/plants', t, `{"id":${big},"name":"Parity 🌵","tag":"x"}`],
    ['create duplicate', 'POST', '/plants', t, `{"id":${big},"name":"again"}`],
    ['create invalid', 'POST', '/plants', t, '{"id":"1","name":" ","extra":true}'],
    ['delete', 'DELETE', `/plants/${big}`, t, undefined],
    ['delete again', 'DELETE', `/plants/${big}`, t, undefined],
    ['no token', 'GET', LIST_PATH, undefined, undefined],
    ['unknown token', 'GET', LIST_PATH, `pst_${'A'.repeat(43)}`, undefined],
  ];
  const answers = new Map<TargetName, Awaited<ReturnType<typeof request>>[]>();
  for (const target of ctx.targets) {
    const list: Awaited<ReturnType<typeof request>>[] = [];
    for (const [, method, path, token, body] of steps) list.push(await request(target.url, method, path, token, body));
    answers.set(target.name, list);
  }
  const checks: ParityCheck[] = [];
  const reference = answers.get('service')!;
  for (const target of ctx.targets.filter((x) => x.name !== 'service')) {
    answers.get(target.name)!.forEach((answer, i) => {
      const want = reference[i];
      const diffs: string[] = [];
      if (answer.status !== want.status) diffs.push(`status ${answer.status} vs ${want.status}`);
      if (answer.body !== want.body)
        diffs.push(`body ${JSON.stringify(answer.body).slice(0, 200)} vs ${JSON.stringify(want.body).slice(0, 200)}`);
      for (const h of ['content-type', 'link', 'www-authenticate']) {
        if ((answer.headers[h] ?? '').toLowerCase() !== (want.headers[h] ?? '').toLowerCase())
          diffs.push(`${h} "${answer.headers[h] ?? ''}" vs "${want.headers[h] ?? ''}"`);
      }
      checks.push({ request: steps[i][0], target: target.name, same: diffs.length === 0, detail: diffs.join('; ') });
    });
  }
  return checks;
}
