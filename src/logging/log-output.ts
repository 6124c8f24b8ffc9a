import { Injectable } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import pino, { Logger } from 'pino';
import { AppConfig } from '../config/configuration';
import { loggerOptions } from './logger-options';

/** Log lines waiting for stdout beyond this are dropped (and counted), never held or waited for. */
export const LOG_BUFFER_BYTES = 1024 * 1024;

/**
 * Where the service's log lines go: stdout, written asynchronously from a buffer of at most
 * LOG_BUFFER_BYTES, so a log reader that is slow, stalled or gone can never block the event loop nor
 * hold the process at exit. Lines that find the buffer full are dropped and counted
 * (`droppedLines`, the metric `log_lines_dropped_total`); once stdout takes lines again, a warning
 * says how many were lost.
 */
@Injectable()
export class LogOutput {
  readonly logger: Logger;
  /** Lines dropped since start because the buffer was full. */
  droppedLines = 0;
  private readonly destination?: ReturnType<typeof pino.destination>;
  /** Lines dropped since the last warning, and when the first of them was. */
  private unreported = 0;
  private droppingSince = '';
  private broken = false;
  private closed = false;

  constructor(config: ConfigService<AppConfig, true>) {
    const options = loggerOptions(config);
    if (options.transport) {
      // Development's readable lines go through pino-pretty's worker thread.
      this.logger = pino(options);
      return;
    }
    // Opening process.stdout puts a piped stdout in non-blocking mode: a write to a reader that
    // stopped reading then fails with EAGAIN and is retried later, instead of holding a libuv worker
    // thread in write(2), which process exit would wait for.
    const fd = process.stdout.fd;
    this.destination = pino.destination({ dest: fd, sync: false, maxLength: LOG_BUFFER_BYTES });
    this.destination.on('drop', () => this.onDrop());
    // A write error (EPIPE: the reader is gone) ends the output; pino then discards further lines.
    this.destination.on('error', () => {
      this.broken = true;
    });
    this.logger = pino(options, this.destination);
  }

  private onDrop(): void {
    this.droppedLines++;
    if (this.unreported++ > 0) return;
    this.droppingSince = new Date().toISOString();
    // The buffer has room again once a write completes; the warning goes in after it.
    this.destination!.once('write', () => setImmediate(() => this.reportDrops()));
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
   * Writes what is buffered, waiting at most `timeoutMs`, then lets go of the rest: after this the
   * process may exit at once, and nothing at exit waits for stdout. Nothing may be logged after it.
   */
  async close(timeoutMs: number): Promise<void> {
    const destination = this.destination;
    if (!destination || this.closed) return;
    this.closed = true;
    if (!this.broken) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        destination.once('close', done);
        destination.end();
      });
    }
    this.abandon();
  }

  /**
   * Lets go of whatever is still buffered, at once. Pino's exit hook then has nothing to flush: its
   * synchronous flush would wait for a stalled stdout, and retry a broken one, forever.
   */
  abandon(): void {
    this.closed = true;
    this.destination?.destroy();
  }
}
