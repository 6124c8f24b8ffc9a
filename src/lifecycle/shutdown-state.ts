import { BeforeApplicationShutdown, Injectable } from '@nestjs/common';

/**
 * Whether this instance is going away. Once set (by the SIGTERM handler, or by any app.close()),
 * readiness answers 503 so the load balancer stops sending new requests here.
 */
@Injectable()
export class ShutdownState implements BeforeApplicationShutdown {
  private stopping = false;

  get isShuttingDown(): boolean {
    return this.stopping;
  }

  begin(): void {
    this.stopping = true;
  }

  beforeApplicationShutdown(): void {
    this.begin();
  }
}
