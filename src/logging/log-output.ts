import { OnApplicationShutdown } from '@nestjs/common';
import { createWriteStream, fstatSync, writeSync } from 'node:fs';
import { Writable } from 'node:stream';
import pino, { Level, Logger } from 'pino';
import { LogConfig } from '../config/configuration';
import { isoTimeField, loggerOptions } from './logger-options';

/** Log lines waiting for stdout beyond this are dropped (and counted), never held or waited for. */
export const LOG_BUFFER_BYTES = 1024 * 1024;

/**
 * Lines are handed to stdout together: at most this long after the first of them was logged, or as
 * soon as this many bytes are waiting.
 */
export const LOG_FLUSH_INTERVAL_MS = 20;
export const LOG_FLUSH_BYTES = 64 * 1024;

/** A line whose fields are serialized when it is handed to stdout. */
interface DeferredLine {
  level: Level;
  /** When it was logged (ms since the epoch). */
  time: number;
  fields: unknown;
  serialize: (fields: never) => string;
}

/** What a request line takes, for deciding when enough is waiting; the figure need not be exact. */
const DEFERRED_LINE_BYTES = 300;

/** Lines in what waits: a deferred line is one, a string as many as it has newlines. */
function countLines(entries: Array<string | DeferredLine>): number {
  let count = 0;
  for (const entry of entries) {
    if (typeof entry !== 'string') count++;
    else for (let at = entry.indexOf('\n'); at !== -1; at = entry.indexOf('\n', at + 1)) count++;
  }
  return count;
}

/**
 * Where the service's log lines go: stdout, without ever blocking the event loop or holding the
 * process at exit, whatever the reader does.
 *
 * - Every JSON line, pino's and the request lines (`writeLine`), is gathered and handed to stdout in
 *   one write at most LOG_FLUSH_INTERVAL_MS after the first of them, or once about LOG_FLUSH_BYTES
 *   are waiting: under load one write per few hundred requests rather than one per request (a write
 *   to a pipe costs more than the line, bench/RESULTS.md), and a line is never later than that.
 * - A request line is serialized then, with the others waiting, not when its request ends: one
 *   loop over many lines keeps its code and data in the CPU's caches, where serializing each line
 *   between two requests found them cold and cost several times as much.
 * - Piped (the container runtime, a log shipper), stdout is Node's own stream, a non-blocking libuv
 *   stream: a write goes straight to the pipe from this thread, and what the reader has not taken
 *   yet waits in the stream. No write goes through libuv's thread pool, whose hand-off to a worker
 *   thread and back costs more than the line (bench/RESULTS.md).
 * - Redirected to a file, stdout is written through the thread pool instead (fileOutput), a batch
 *   at a time: Node's own stream writes a file synchronously, and a disk that stalls (a journal
 *   commit behind the database's flushes, a full device queue, a network volume) then held the
 *   event loop, and every request with it, for as long as the write took. A batch costs one
 *   hand-off, a few hundred lines at a time under load.
 * - At most LOG_BUFFER_BYTES may wait for a slow or stalled reader or disk. Lines beyond are
 *   dropped and counted (`droppedLines`, the metric `log_lines_dropped_total`), and once stdout
 *   takes lines again a warning says how many were lost. A reader that is gone (EPIPE) ends the
 *   output.
 */
export class LogOutput implements OnApplicationShutdown {
  readonly logger: Logger;
  /**
   * Whether lines are JSON text that `writeLine` takes. False while development's readable lines go
   * through pino-pretty's worker thread: lines must then be logged through `logger`.
   */
  readonly json: boolean;
  /** Lines dropped since start because too much was waiting for stdout. */
  droppedLines = 0;
  private readonly sink?: Writable;
  /** What pino writes after the time in every line of this logger: `,"pid":…,"hostname":…`. */
  private readonly bindings: string = '';
  /** Lines not yet handed to stdout (about `pendingBytes`), and the timer that will hand them over. */
  private pending: Array<string | DeferredLine> = [];
  private pendingBytes = 0;
  private flushTimer?: NodeJS.Timeout;
  /** Lines dropped since the last warning, and when the first of them was. */
  private unreported = 0;
  private droppingSince = '';
  private broken = false;
  private closed = false;
  /** stdout's descriptor when it is a file: at exit, what waits is written to it directly. */
  private readonly exitFd?: number;
  private exiting = false;

  /** `sink`: where the lines go, stdout unless a test gives another stream. */
  constructor(log: LogConfig, sink?: Writable) {
    const options = loggerOptions(log);
    if (options.transport) {
      this.json = false;
      this.logger = pino(options);
      return;
    }
    this.json = true;
    const file = sink ? undefined : fileOutput(STDOUT_FD);
    this.sink = sink ?? file ?? process.stdout;
    this.exitFd = file ? STDOUT_FD : undefined;
    // EPIPE: the reader is gone. Nothing more is written, and nothing is thrown.
    this.sink.on('error', this.onSinkError);
    // A sudden exit (a crash) still writes the lines not handed over yet, as far as stdout takes them.
    process.on('exit', this.flushAtExit);
    this.logger = pino(options, { write: (line: string) => this.write(line) });
    this.bindings = (this.logger as unknown as Record<symbol, string>)[pino.symbols.chindingsSym];
  }

  /** The app is closing: its last lines go out through `close`, no longer at process exit. */
  onApplicationShutdown(): void {
    process.removeListener('exit', this.flushAtExit);
  }

  /**
   * Writes one line of `fields`, serialized by `serialize` (`"key":value,…,"msg":"…"`) when it is
   * handed to stdout, and framed exactly as pino frames its own lines (level, time of this call,
   * bindings). Only while `json` is true.
   */
  writeLine<T>(level: Level, fields: T, serialize: (fields: T) => string): void {
    this.queue({ level, time: Date.now(), fields, serialize }, DEFERRED_LINE_BYTES);
  }

  /** Takes one or more whole JSON lines, each ending in a newline. */
  write(lines: string): void {
    this.queue(lines, lines.length);
  }

  private queue(entry: string | DeferredLine, bytes: number): void {
    if (this.closed || this.broken) return;
    this.pending.push(entry);
    this.pendingBytes += bytes;
    if (this.pendingBytes >= LOG_FLUSH_BYTES) this.flush();
    // Unref'd: waiting lines never keep the process alive (exit and close hand them over).
    else this.flushTimer ??= setTimeout(this.flush, LOG_FLUSH_INTERVAL_MS).unref();
  }

  /** Hands every waiting line to stdout now (or drops and counts them, if too much waits already). */
  readonly flush = (): void => {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const entries = this.pending;
    const bytes = this.pendingBytes;
    if (entries.length === 0) return;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.broken || !this.sink) return;
    // A reader that has stalled near the limit: lines that would not fit are dropped without being made.
    if (this.sink.writableLength + bytes > LOG_BUFFER_BYTES) return this.drop(countLines(entries));
    let lines = '';
    for (const entry of entries) {
      lines +=
        typeof entry === 'string'
          ? entry
          : `{"level":"${entry.level}"${isoTimeField(entry.time)}${this.bindings},${entry.serialize(entry.fields as never)}}\n`;
    }
    if (this.sink.writableLength + lines.length > LOG_BUFFER_BYTES) this.drop(countLines([lines]));
    else if (this.exiting && this.exitFd !== undefined) writeAtExit(this.exitFd, lines);
    else this.sink.write(lines);
  };

  /** At exit nothing asynchronous runs any more: to a file, the last lines are written at once. */
  private readonly flushAtExit = (): void => {
    this.exiting = true;
    this.flush();
  };

  private readonly onSinkError = (): void => {
    this.broken = true;
    this.pending = [];
    this.pendingBytes = 0;
  };

  private drop(count: number): void {
    this.droppedLines += count;
    const first = this.unreported === 0;
    this.unreported += count;
    if (!first) return;
    this.droppingSince = new Date().toISOString();
    // stdout has taken what was waiting once it drains: the warning goes out then. (A single batch
    // over the limit leaves nothing waiting: the warning follows at once.)
    if (this.sink!.writableNeedDrain) this.sink!.once('drain', () => this.reportDrops());
    else setImmediate(() => this.reportDrops());
  }

  private reportDrops(): void {
    const dropped = this.unreported;
    this.unreported = 0;
    this.logger.warn(
      { droppedLines: dropped, since: this.droppingSince },
      `Log output could not keep up: ${dropped} lines dropped since ${this.droppingSince}`,
    );
  }

  /**
   * Hands stdout what is left and waits at most `timeoutMs` for it to be taken, then lets go of the
   * rest: after this the process may exit at once. Nothing may be logged after it.
   */
  async close(timeoutMs: number): Promise<void> {
    const sink = this.sink;
    if (!sink || this.closed) return;
    this.flush();
    this.closed = true;
    process.removeListener('exit', this.flushAtExit);
    if (this.broken || sink.writableLength === 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        sink.removeListener('drain', done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      sink.once('drain', done);
    });
  }

  /**
   * Lets go of the lines not yet handed to stdout, at once. What stdout still holds does not delay
   * the exit: a piped stdout's queue is dropped when the process exits.
   */
  abandon(): void {
    this.closed = true;
    this.pending = [];
    this.pendingBytes = 0;
    clearTimeout(this.flushTimer);
    process.removeListener('exit', this.flushAtExit);
  }
}

const STDOUT_FD = 1;

/**
 * A stream that writes a file through libuv's thread pool, one write at a time, when `fd` is a
 * regular file (stdout redirected with `> file`); undefined for anything else (a pipe, a socket, a
 * terminal: Node's own stream serves those). Lines that wait for it count in its `writableLength`,
 * as they do in a pipe's stream, so the same bound (LOG_BUFFER_BYTES) applies.
 */
export function fileOutput(fd: number): Writable | undefined {
  try {
    if (!fstatSync(fd).isFile()) return undefined;
  } catch {
    return undefined;
  }
  return createWriteStream('', { fd, autoClose: false, emitClose: false });
}

/** As much of `lines` as the file takes at exit; a failure (the disk is gone) loses them. */
function writeAtExit(fd: number, lines: string): void {
  try {
    writeSync(fd, lines);
  } catch {
    // nothing more can be done at exit
  }
}
