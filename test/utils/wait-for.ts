/**
 * Polls `condition` until it holds, failing after `timeoutMs`: what a test does instead of sleeping
 * for a guessed time before it asserts.
 */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  {
    timeoutMs = 10_000,
    intervalMs = 20,
    what = 'condition',
  }: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
