/** Processes, CPU pinning and /proc readings for the benchmark. Linux only. */
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, openSync, readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function run(
  cmd: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { ...options, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

let tasksetChecked: boolean | undefined;
/** Pinning needs taskset and at least two cores. */
export async function canPin(): Promise<boolean> {
  if (tasksetChecked === undefined) {
    tasksetChecked =
      os.cpus().length >= 2 &&
      (await run('taskset', ['-p', String(process.pid)]).then(
        () => true,
        () => false,
      ));
  }
  return tasksetChecked;
}

export async function getAffinity(pid: number): Promise<string> {
  const { stdout } = await run('taskset', ['-pc', String(pid)]);
  return stdout.trim().split(':').pop()!.trim();
}

/** Sets the CPU list of every thread of a process (threads created later inherit it). */
export async function setAffinity(pid: number, cpus: string): Promise<void> {
  await run('taskset', ['-a', '-pc', cpus, String(pid)]);
}

export interface Spawned {
  name: string;
  child: ChildProcess;
  pid: number;
  logPath: string;
  exited: Promise<number | null>;
}

/**
 * Starts a process, pinned with taskset when `cpus` is given, its output going to a log file:
 * through a pipe this process copies from (as a container runtime reads it), or with `toFile` as
 * the file itself (as `> file` in a shell gives it).
 */
export function startProcess(
  name: string,
  command: string[],
  options: { env: NodeJS.ProcessEnv; cwd: string; cpus?: string; logPath: string; ipc?: boolean; toFile?: boolean },
): Spawned {
  const argv = options.cpus ? ['taskset', '-c', options.cpus, ...command] : command;
  const file = options.toFile ? openSync(options.logPath, 'w') : undefined;
  const output = file ?? 'pipe';
  const child = spawn(argv[0], argv.slice(1), {
    cwd: options.cwd,
    env: options.env,
    stdio: options.ipc ? ['ignore', output, output, 'ipc'] : ['ignore', output, output],
  });
  if (file === undefined) {
    const log = createWriteStream(options.logPath);
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
  } else {
    closeSync(file);
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  if (child.pid === undefined) throw new Error(`could not start ${name}: ${argv.join(' ')}`);
  // taskset execs the command, so the pid is the command's own.
  return { name, child, pid: child.pid, logPath: options.logPath, exited };
}

/** Ends a process we started, by its pid: SIGTERM, then SIGKILL after a grace period. */
export async function stopProcess(proc: Spawned, signal: NodeJS.Signals = 'SIGTERM', graceMs = 8000): Promise<void> {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  proc.child.kill(signal);
  const done = await Promise.race([proc.exited.then(() => true), sleep(graceMs).then(() => false)]);
  if (!done) {
    proc.child.kill('SIGKILL');
    await proc.exited;
  }
}

export function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** Waits until the server answers any HTTP request (the API answers 401 without a token). */
export async function waitForHttp(url: string, proc: Spawned, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null)
      throw new Error(`${proc.name} exited (${proc.child.exitCode}):\n${tail(proc.logPath)}`);
    const ok = await new Promise<boolean>((resolve) => {
      const req = http.get(url, (res) => {
        res.resume();
        resolve(true);
      });
      req.on('error', () => resolve(false));
      req.setTimeout(1000, () => req.destroy());
    });
    if (ok) return;
    await sleep(250);
  }
  throw new Error(`${proc.name} did not answer on ${url} within ${timeoutMs / 1000}s:\n${tail(proc.logPath)}`);
}

/** Resident memory in MiB (VmRSS), and the peak since start (VmHWM). */
export function readMemory(pid: number): { rssMb: number; hwmMb: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: kb('VmRSS') / 1024, hwmMb: kb('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

let clockTicks = 100;
export async function initClockTicks(): Promise<void> {
  clockTicks = Number((await run('getconf', ['CLK_TCK']).catch(() => ({ stdout: '100' }))).stdout.trim()) || 100;
}

/** User + system CPU seconds of a whole process (all its threads). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return NaN;
  }
}

/** CPU seconds all cores spent busy since boot (/proc/stat: user, nice, system, irq, softirq, steal). */
export function systemBusySeconds(): number {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]
      .trim()
      .split(/\s+/)
      .map(Number);
    return (user + nice + system + irq + softirq + (steal || 0)) / clockTicks;
  } catch {
    return NaN;
  }
}

/** Samples VmRSS every `intervalMs` until stopped; returns the maximum seen. */
export function sampleRss(pid: number, intervalMs = 200): { stop: () => number } {
  let max = readMemory(pid)?.rssMb ?? NaN;
  const timer = setInterval(() => {
    const mem = readMemory(pid);
    if (mem && !(mem.rssMb <= max)) max = mem.rssMb;
  }, intervalMs);
  return {
    stop: () => {
      clearInterval(timer);
      const mem = readMemory(pid);
      if (mem && !(mem.rssMb <= max)) max = mem.rssMb;
      return max;
    },
  };
}

/** The pid of the local database server: from its pid file, else the process named mariadbd/mysqld. */
export function findDatabasePid(pidFile: string | null): number | null {
  const isDb = (pid: number) => {
    try {
      return /^(mariadbd|mysqld)$/.test(readFileSync(`/proc/${pid}/comm`, 'utf8').trim());
    } catch {
      return false;
    }
  };
  if (pidFile && existsSync(pidFile)) {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    if (isDb(pid)) return pid;
  }
  const found = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter(isDb);
  return found.length === 1 ? found[0] : null;
}

export function cpuModel(): string {
  try {
    return (
      /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ??
      os.cpus()[0]?.model ??
      'unknown'
    );
  } catch {
    return os.cpus()[0]?.model ?? 'unknown';
  }
}
