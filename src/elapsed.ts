/**
 * Milliseconds since `started` (a performance.now() reading), to a tenth. Elapsed time only,
 * never a date: a measurement, not "now", so it does not come from the clock.
 */
export function elapsedSince(started: number): number {
  return Math.round((performance.now() - started) * 10) / 10;
}
