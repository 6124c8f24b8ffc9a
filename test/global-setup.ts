import { buildService } from './utils/service-build';

/** Before the e2e specs: the service compiled once for the processes they start. */
export default function globalSetup(): void {
  buildService();
}
