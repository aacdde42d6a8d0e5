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

/** One status check as the simulator saw it. */
export interface CheckSpan {
  readonly referenceId: string;
  readonly worker: string | undefined;
  readonly from: number;
  readonly to: number;
}

/** The status checks among the simulator's recorded requests, with the `x-worker` header each carried. */
export function checkSpans(
  requests: readonly {
    method: string;
    path: string;
    headers: Readonly<Record<string, string>>;
    receivedAt: string;
    answeredAt: string | undefined;
  }[],
): CheckSpan[] {
  return requests
    .filter((request) => request.method === 'GET' && request.path.startsWith('/v1/collections/check/'))
    .map((request) => ({
      referenceId: request.path.slice('/v1/collections/check/'.length),
      worker: request.headers['x-worker'],
      from: Date.parse(request.receivedAt),
      // A request still in progress has no end yet: it overlaps everything after its start.
      to: request.answeredAt === undefined ? Number.POSITIVE_INFINITY : Date.parse(request.answeredAt),
    }));
}

/** Pairs of checks of one reference whose time spans overlap (touching ends do not count). */
export function overlappingChecks(spans: readonly CheckSpan[]): [CheckSpan, CheckSpan][] {
  const byReference = new Map<string, CheckSpan[]>();
  for (const span of spans) {
    const list = byReference.get(span.referenceId) ?? [];
    list.push(span);
    byReference.set(span.referenceId, list);
  }
  const overlaps: [CheckSpan, CheckSpan][] = [];
  for (const list of byReference.values()) {
    list.sort((a, b) => a.from - b.from);
    for (let index = 1; index < list.length; index++) {
      const previous = list[index - 1] as CheckSpan;
      const current = list[index] as CheckSpan;
      if (current.from < previous.to) overlaps.push([previous, current]);
    }
  }
  return overlaps;
}
