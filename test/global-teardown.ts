import { removeServiceBuild } from './utils/service-build';

/** After the e2e specs: the run's build removed. */
export default function globalTeardown(): void {
  removeServiceBuild();
}
