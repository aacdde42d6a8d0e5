/**
 * What a settlement worker makes of a check's outcome: the record `onSettled` is given before the write, the pause
 * a 429 imposes on every check, and the reason a log line gives.
 *
 * @module
 */
import type { ApiError } from '../core/errors.js';
import type { LevelLogger } from '../core/logger.js';
import { backoffDelayMs } from '../core/retry.js';
import type { PaymentChange, PaymentRecord } from '../journal/journal.js';

/** The record as it will read once `change` is written (what `onSettled` is given before the write). */
export function mergeChange(record: PaymentRecord, change: PaymentChange): PaymentRecord {
  const merged: Record<string, unknown> = { ...record };
  for (const [key, value] of Object.entries(change)) if (value !== undefined && key !== 'by' && key !== 'requestId') merged[key] = value;
  // The version the write after delivery gives it; the journal stamps its own `updatedAt` then, so the one
  // delivered is this worker's clock at delivery.
  merged.version = record.version + 1;
  merged.updatedAt = new Date().toISOString();
  delete merged.decidableAt;
  return merged as unknown as PaymentRecord;
}

/** An error as the `reason` field of a log line. */
export function reasonOf(error: unknown): { reason: string } {
  return { reason: error instanceof Error ? error.message : String(error) };
}

/**
 * The pause of every check after a 429 (the `rateLimited`-th in a row): its `Retry-After`, else the backoff, capped
 * at `maxRetryAfterMs` (logged at `error`: the client's own limit on a Retry-After holds here too, so one answer
 * cannot stop every check for a day).
 */
export function rateLimitPauseMs(
  error: ApiError,
  rateLimited: number,
  maxRetryAfterMs: number,
  logger: Pick<LevelLogger, 'error'>,
): number {
  const pauseMs = error.retryAfterMs ?? backoffDelayMs(rateLimited);
  if (!(pauseMs > maxRetryAfterMs)) return pauseMs;
  logger.error('settlement worker: the service asked to wait longer than maxRetryAfterMs; pausing for maxRetryAfterMs', {
    retryAfterMs: pauseMs,
    maxRetryAfterMs,
  });
  return maxRetryAfterMs;
}
