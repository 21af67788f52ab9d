/** Durations as callers and scenario files write them: "800ms", "8s", "1.5s", "2m" or ms. */

/** The written form of a duration ("800ms", "8s", "1.5s", "2m"). */
export const DURATION_PATTERN = /^(\d+(?:\.\d+)?)\s*(ms|s|m)$/;

/** Milliseconds from "800ms", "8s", "1.5s", "2m" or a plain number of milliseconds. */
export function durationMs(value: number | string): number {
  if (typeof value === 'number') return value;
  const m = DURATION_PATTERN.exec(value.trim());
  const unit = m?.[2];
  const amount = Number(m?.[1]);
  return unit === 'm' ? amount * 60_000 : unit === 's' ? amount * 1000 : amount;
}
