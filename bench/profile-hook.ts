/**
 * Preloaded (node -r) into a second instance of the service when the benchmark profiles it. The
 * first SIGUSR2 starts V8's sampling profiler (the one behind `node --cpu-prof`), the second
 * writes the profile to BENCH_PROFILE_OUT and exits: only the load, not the start-up, is profiled.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.BENCH_PROFILE_OUT ?? `service-${process.pid}.cpuprofile`;
const session = new Session();
session.connect();
let running = false;

process.on('SIGUSR2', () => {
  if (!running) {
    running = true;
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 1000 }, () => session.post('Profiler.start')),
    );
    return;
  }
  session.post('Profiler.stop', (error, result) => {
    if (!error) writeFileSync(out, JSON.stringify(result.profile));
    process.exit(error ? 1 : 0);
  });
});
