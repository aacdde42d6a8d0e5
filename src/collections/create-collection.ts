/**
 * The create (`POST /v1/collections/mobile-money`): sent once per attempt, reconciled by `referenceId` through a
 * status check, and the service's answers read into what `initiate` resolves with.
 *
 * @module
 */
import { ApiError, NotFoundError } from '../core/errors.js';
import { createOnce } from '../core/idempotent-create.js';
import { attemptWindowMs } from '../core/retry.js';
import type { CallSettings, Transport } from '../core/transport.js';
import { parseResponse } from '../core/validation.js';
import { isDuplicateEvidence, isDuplicateReference } from './duplicate-answer.js';
import type { NotFoundEvidence } from './not-found-evidence.js';
import { requestIdOf, withRequestId } from './request-id.js';
import { InitiateCollectionResponseSchema, type InitiatedCollection } from './schemas.js';
import type { StatusChecks } from './status-checks.js';

/** The create's path (and its route: it names no reference). */
export const CREATE_PATH = '/v1/collections/mobile-money';

/** How the service treats a second create for a `referenceId` it holds (the client's `duplicateReferences`). */
export interface DuplicateRule {
  /** `'refused'`: the service refuses it with 409 (or 422 naming `referenceId`) in its envelope, so a resend is safe. */
  readonly duplicateReferences: 'refused' | 'unknown';
  /** An earlier call (a record in the journal) may have created it: the first attempt is already a resend. */
  readonly resending?: boolean;
  /**
   * With `'refused'`: until when (this process's monotonic clock) the service still remembers the reference, from
   * `duplicateMemoryMs`. A resend of this call leaves only if its attempt ends before then; after it the call checks
   * the reference instead (found, or `UnknownOutcomeError`). Default: no bound.
   */
  readonly rememberedUntil?: number;
}

/**
 * The create itself: sent and reconciled by `referenceId`. With a journal, `beforeAttempt` runs before each
 * attempt (the journal's write) and gives the time the attempt must neither leave nor last past; a duplicate
 * answer then always means the reference exists (the journal holds this payment), never "not created".
 * With `duplicates.duplicateReferences` `'refused'`, an attempt whose outcome is unknown is followed by the same
 * create, and a duplicate answer in the service's envelope resolves `pending` (see {@link duplicateMeansPending}).
 */
export function createCollection(
  transport: Transport,
  checks: StatusChecks,
  evidence: NotFoundEvidence,
  referenceId: string,
  body: object,
  settings: CallSettings,
  beforeAttempt?: () => Promise<number>,
  duplicates: DuplicateRule = { duplicateReferences: 'unknown' },
): Promise<InitiatedCollection> {
  const attempt = { ...settings, maxRetries: 0 };
  const refused = duplicates.duplicateReferences === 'refused';
  return createOnce<InitiatedCollection>(transport, settings, {
    referenceId,
    lookupBeforeResend: true,
    duplicateMeansExists: beforeAttempt !== undefined,
    absentSeen: 'not-found',
    resending: duplicates.resending === true,
    ...(refused
      ? {
          refusesDuplicates: {
            existing: (error) => duplicateMeansPending(referenceId, error),
            refusal: isDefiniteRefusal,
            ...(duplicates.rememberedUntil === undefined ? {} : { rememberedUntil: duplicates.rememberedUntil }),
          },
        }
      : {}),
    send: async (attemptNumber) => {
      const deadline = await beforeAttempt?.();
      const limited = deadline === undefined ? attempt : { ...attempt, deadline: Math.min(deadline, attempt.deadline ?? deadline) };
      const result = await transport.send(
        { method: 'POST', path: CREATE_PATH, route: CREATE_PATH, body, referenceId },
        limited,
        attemptNumber,
      );
      // Every field of the 202's data, including those the document does not list.
      const created = withRequestId(
        withTextId(parseResponse(InitiateCollectionResponseSchema, result, 'collections').data),
        result.requestId,
      );
      evidence.markProved();
      return created;
    },
    lookup: async (attemptNumber) => {
      try {
        const status = await checks.once(referenceId, attempt, attemptNumber);
        return { kind: 'found', result: withRequestId({ referenceId, status: status.statusText }, requestIdOf(status)) };
      } catch (error) {
        // Not visible yet is no proof of absence (the status check may lag behind the create).
        if (error instanceof NotFoundError) return { kind: 'absent' };
        throw error;
      }
    },
    isDuplicate: isDuplicateReference,
  });
}

/**
 * How long after an attempt's journal write a push of this call can still reach the service: every attempt's
 * time limit and the backoff between them (3 × 30 s + 2 × 8 s with the defaults).
 */
export function sendWindowMs(settings: CallSettings): number {
  return attemptWindowMs(settings.maxRetries, settings.timeoutMs);
}

/**
 * The 202's undocumented `id` as `getById` takes it: text kept, a number as its decimal text, anything else left out
 * (a create the service accepted must never fail over a field the document does not even list).
 */
export function withTextId(data: Record<string, unknown> & { referenceId: string; status: string }): InitiatedCollection {
  const { id, ...rest } = data;
  if (typeof id === 'string' && id !== '') return { ...rest, id };
  if (typeof id === 'number' && Number.isFinite(id)) return { ...rest, id: String(id) };
  return rest;
}

/**
 * For a service that refuses duplicate references, after an attempt whose outcome is unknown: a duplicate answer
 * in the service's own envelope means the collection exists (`pending`). Without the envelope (a proxy's page, an
 * empty body) it proves nothing: `undefined`.
 */
export function duplicateMeansPending(referenceId: string, error: unknown): InitiatedCollection | undefined {
  if (!isDuplicateEvidence(error)) return undefined;
  return withRequestId({ referenceId, status: 'pending' }, (error as ApiError).requestId);
}

/**
 * A refusal of the very create an earlier attempt sent, in the service's envelope: 400, 401, 403, or a 422 that is
 * not about the duplicate. The body is byte-identical, so the earlier attempt was refused alike.
 */
export function isDefiniteRefusal(error: unknown): boolean {
  if (!(error instanceof ApiError) || !error.serviceEnvelope || isDuplicateReference(error)) return false;
  return error.status === 400 || error.status === 401 || error.status === 403 || error.status === 422;
}
