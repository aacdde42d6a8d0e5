/** The most events in any window [t, t + windowMs) of a list of times (sorted here). */
export function maxInAnyWindow(times: readonly number[], windowMs = 1_000): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] as number) - (sorted[start] as number) >= windowMs) start++;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
