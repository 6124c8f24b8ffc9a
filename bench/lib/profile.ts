/** Reads a V8 .cpuprofile (node --cpu-prof) and sums self time by function and by package. */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface ProfileEntry {
  name: string;
  selfMs: number;
  share: number;
}

export interface ProfileSummary {
  totalMs: number;
  /** Share of samples that were not idle. */
  busyShare: number;
  functions: ProfileEntry[];
  packages: ProfileEntry[];
  /** Time with the package anywhere on the (synchronous) stack: what it and everything it calls cost. */
  inclusive: ProfileEntry[];
}

/** Where a frame's code lives: an npm package, Node's own code, the service's dist, or a V8 pseudo-frame. */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native / V8)';
  if (url.startsWith('node:'))
    return `node:${url.slice(5).split('/')[0] === 'internal' ? 'internal' : url.slice(5).split('/')[0]}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('/dist/');
  if (dist !== -1)
    return `service: ${
      url
        .slice(dist + 6)
        .split('/')
        .slice(0, -1)
        .join('/') || '.'
    }`;
  return url.replace(/^file:\/\//, '');
}

function shortUrl(url: string): string {
  const nm = url.lastIndexOf('/node_modules/');
  if (nm !== -1) return url.slice(nm + '/node_modules/'.length);
  const dist = url.indexOf('/dist/');
  if (dist !== -1) return url.slice(dist + 1);
  return url.replace(/^file:\/\//, '');
}

export function summarizeProfile(path: string, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const totalMs = (profile.endTime - profile.startTime) / 1000;
  const selfUs = new Map<number, number>();
  if (profile.samples && profile.timeDeltas) {
    // Each sample's time is the delta to the next sample.
    for (let i = 0; i < profile.samples.length; i++) {
      const dt = profile.timeDeltas[i + 1] ?? 0;
      selfUs.set(profile.samples[i], (selfUs.get(profile.samples[i]) ?? 0) + dt);
    }
  } else {
    const hits = profile.nodes.reduce((sum, n) => sum + (n.hitCount ?? 0), 0);
    for (const n of profile.nodes) selfUs.set(n.id, ((n.hitCount ?? 0) / Math.max(1, hits)) * totalMs * 1000);
  }

  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  let idleUs = 0;
  let allUs = 0;
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0) continue;
    allUs += us;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') idleUs += us;
    const fn = url
      ? `${functionName || '(anonymous)'} ${shortUrl(url)}:${lineNumber + 1}`
      : functionName || '(anonymous)';
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
    const pkg = packageOf(url, functionName);
    byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + us);
  }
  const busyUs = Math.max(1, allUs - idleUs);

  // Inclusive: each node's time counts once for every package on its stack.
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const inclusive = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = selfUs.get(node.id) ?? 0;
    if (us === 0 || node.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (frame.url) seen.add(packageOf(frame.url, frame.functionName));
    }
    for (const pkg of seen) inclusive.set(pkg, (inclusive.get(pkg) ?? 0) + us);
  }
  const rank = (map: Map<string, number>, n: number): ProfileEntry[] =>
    [...map.entries()]
      .filter(([name]) => name !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: us / busyUs }));
  return {
    totalMs,
    busyShare: allUs > 0 ? busyUs / allUs : 0,
    functions: rank(byFunction, top),
    packages: rank(byPackage, 20),
    inclusive: rank(inclusive, 25),
  };
}
