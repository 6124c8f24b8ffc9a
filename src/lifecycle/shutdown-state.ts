import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';

/**
 * Whether this instance is going away. Once set (by the SIGTERM handler, or by any app.close()),
 * readiness answers 503 so the load balancer stops sending new requests here.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private stopping = false;
  private began?: number;

  get isShuttingDown(): boolean {
    return this.stopping;
  }

  /** When the shutdown began (Date.now()), if it has. */
  get beganAt(): number | undefined {
    return this.began;
  }

  begin(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.began = Date.now();
  }

  beforeApplicationShutdown(): void {
    this.begin();
  }
}
