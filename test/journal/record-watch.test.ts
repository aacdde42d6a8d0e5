/**
 * The monotonic measure of a record's age (src/journal/record-watch.ts): how long this process has watched one
 * version of a record unchanged. A wrong answer here closes a payment as `not-sent` too early (a watch that runs on
 * across a new version) or never (one that restarts on every read). `performance.now()` is faked.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RecordWatch } from '../../src/journal/record-watch.ts';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:05.000Z';
const seen = (referenceId: string, version = 1, updatedAt = T0) => ({ referenceId, version, updatedAt });

beforeEach(() => vi.useFakeTimers({ toFake: ['performance'] }));
afterEach(() => vi.useRealTimers());

describe('RecordWatch.watched', () => {
  it('is 0 on the first sight of a version, then the monotonic time since that sight', () => {
    const watch = new RecordWatch();
    expect(watch.watched(seen('a'))).toBe(0);
    vi.advanceTimersByTime(1_500);
    expect(watch.watched(seen('a'))).toBe(1_500);
    vi.advanceTimersByTime(500);
    // A later read does not restart the watch of the same version.
    expect(watch.watched(seen('a'))).toBe(2_000);
  });

  it('restarts on a new version, and on the same version number written at another time (a rewrite)', () => {
    const watch = new RecordWatch();
    watch.watched(seen('a'));
    vi.advanceTimersByTime(1_000);
    expect(watch.watched(seen('a', 2))).toBe(0);
    vi.advanceTimersByTime(1_000);
    expect(watch.watched(seen('a', 2))).toBe(1_000);
    expect(watch.watched(seen('a', 2, T1))).toBe(0);
    vi.advanceTimersByTime(250);
    expect(watch.watched(seen('a', 2, T1))).toBe(250);
  });

  it('keeps one watch per record', () => {
    const watch = new RecordWatch();
    watch.watched(seen('a'));
    vi.advanceTimersByTime(700);
    expect(watch.watched(seen('b'))).toBe(0);
    vi.advanceTimersByTime(300);
    expect(watch.watched(seen('a'))).toBe(1_000);
    expect(watch.watched(seen('b'))).toBe(300);
  });

  it('forget() ends a watch: the next sight starts it again', () => {
    const watch = new RecordWatch();
    watch.watched(seen('a'));
    watch.watched(seen('b'));
    vi.advanceTimersByTime(1_000);
    watch.forget('a');
    expect(watch.watched(seen('a'))).toBe(0);
    expect(watch.watched(seen('b'))).toBe(1_000);
  });
});

describe('RecordWatch capacity', () => {
  it('holds exactly its capacity; past it the record watched longest unchanged is forgotten (its wait starts over)', () => {
    const watch = new RecordWatch(2);
    watch.watched(seen('a'));
    watch.watched(seen('b'));
    vi.advanceTimersByTime(100);
    // Two records at a capacity of two: both still remembered.
    expect(watch.watched(seen('a'))).toBe(100);
    expect(watch.watched(seen('b'))).toBe(100);
    watch.watched(seen('c'));
    vi.advanceTimersByTime(100);
    expect(watch.watched(seen('b'))).toBe(200);
    expect(watch.watched(seen('c'))).toBe(100);
    expect(watch.watched(seen('a'))).toBe(0);
  });

  it('a record seen at a new version counts as the newest watch, not by when it was first seen', () => {
    const watch = new RecordWatch(2);
    watch.watched(seen('a'));
    watch.watched(seen('b'));
    vi.advanceTimersByTime(10);
    watch.watched(seen('a', 2));
    watch.watched(seen('c'));
    vi.advanceTimersByTime(90);
    // 'b' was the oldest watch left when 'c' came: it went; 'a' (version 2) stayed.
    expect(watch.watched(seen('a', 2))).toBe(90);
    expect(watch.watched(seen('c'))).toBe(90);
    expect(watch.watched(seen('b'))).toBe(0);
  });
});
