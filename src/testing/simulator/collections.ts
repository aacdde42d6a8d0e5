/**
 * The simulated Collections Gateway API: initiate a mobile money collection, check its status, read it, and `/health`,
 * written from the Collections document (its 422 rules included). When a pending collection settles is the settlement
 * module's concern.
 *
 * @module
 */
import type { SimulatorFixtures } from '../fixtures.js';
import type { Authenticator } from './auth.js';
import { collectionsError, type FieldError, json, validationProblem } from './envelopes.js';
import { parseJsonBody, type Route, type RouteContext, type SimulatorResponse } from './exchange.js';
import { hasAtMostTwoDecimals, UUID_PATTERN, ZAMBIAN_MOBILE } from './formats.js';
import type { SimulatedCollection, StoredCollection } from './records.js';
import type { CollectionEntry, Settlement } from './settlement.js';

/** What the Collections service needs from the simulator. */
export interface CollectionsServiceOptions {
  /** Authenticates requests. */
  readonly auth: Authenticator;
  /** The seeded products (a product belongs to one partner). */
  readonly products: SimulatorFixtures['products'];
  /** Decides when and how collections settle. */
  readonly settlement: Settlement;
  /** The clock, epoch ms. */
  readonly now: () => number;
  /** Generates collection ids. */
  readonly generateId: () => string;
  /** The words the service speaks for each status, and the field of a status answer that carries it. */
  readonly vocabulary?: StatusVocabulary | undefined;
}

/**
 * The words a simulated Collections service answers: by default the document's (`pending`, `successful`, `failed`,
 * in `statusText`). Tell it to speak another vocabulary to test a client's `statusWords` mapping.
 *
 * @group Simulator
 */
export interface StatusVocabulary {
  /** The word for a collection not settled yet (status checks, the 202, the details record). @defaultValue `'pending'` */
  pending?: string | undefined;
  /** The word for a collection paid. @defaultValue `'successful'` */
  successful?: string | undefined;
  /** The word for a collection that failed. @defaultValue `'failed'` */
  failed?: string | undefined;
  /** The field of a status answer that carries the word. @defaultValue `'statusText'` (the document's) */
  statusField?: 'statusText' | 'status' | undefined;
}

/**
 * Checks a {@link StatusVocabulary}.
 * @throws TypeError for a word that is not a non-empty string, or an unknown `statusField`.
 */
export function checkVocabulary(vocabulary: StatusVocabulary): void {
  for (const key of ['pending', 'successful', 'failed'] as const) {
    const word = vocabulary[key];
    if (word !== undefined && (typeof word !== 'string' || word === '')) {
      throw new TypeError(`statusWords.${key} must be a non-empty string`);
    }
  }
  const field = vocabulary.statusField;
  if (field !== undefined && field !== 'statusText' && field !== 'status') {
    throw new TypeError("statusWords.statusField must be 'statusText' or 'status'");
  }
}

/** The collections of every partner and the Collections routes over them. */
export class CollectionsService {
  /** The Collections endpoints. */
  readonly routes: readonly Route[] = [
    { method: 'POST', pattern: '/v1/collections/mobile-money', handle: (c) => this.#initiateCollection(c) },
    { method: 'GET', pattern: '/v1/collections/check/:referenceId', handle: (c) => this.#checkStatus(c) },
    { method: 'GET', pattern: '/v1/collections/:id', handle: (c) => this.#getCollection(c) },
    { method: 'GET', pattern: '/health', handle: (c) => this.#health(c) },
  ];
  readonly #options: CollectionsServiceOptions;
  #collections: CollectionEntry[] = [];
  /** The same entries by `referenceId` (of every partner): lookups stay O(1) with 100 000 collections stored. */
  #byReference = new Map<string, CollectionEntry[]>();

  constructor(options: CollectionsServiceOptions) {
    this.#options = options;
  }

  /** Stored collections, oldest first, of one partner or of all (copies; time-based settlement applied). */
  collections(partnerId?: string): StoredCollection[] {
    return this.#collections
      .filter((entry) => partnerId === undefined || entry.partnerId === partnerId)
      .map((entry) => {
        this.#options.settlement.settleIfDue(entry);
        return { ...structuredClone(entry.record), partnerId: entry.partnerId, statusChecks: entry.statusChecks };
      });
  }

  /** The stored collections with `referenceId`, of every partner unless `partnerId` is given (the live entries). */
  withReference(referenceId: string, partnerId: string | undefined): CollectionEntry[] {
    return (this.#byReference.get(referenceId) ?? []).filter((entry) => partnerId === undefined || entry.partnerId === partnerId);
  }

  /** Forgets every collection. */
  reset(): void {
    this.#collections = [];
    this.#byReference = new Map();
  }

  #initiateCollection(context: RouteContext): SimulatorResponse {
    const auth = this.#options.auth.authenticate(context, 'collections');
    if (!auth.ok) return auth.response;
    const partnerId = auth.value.partnerId;
    const { requestId, path } = context;
    const parsed = parseJsonBody(context.request.body);
    if (!parsed.ok) return collectionsError(400, 'E_BAD_REQUEST', 'The request body is not valid JSON', requestId);
    const validated = validateCollectionInput(parsed.value, partnerId, this.#options.products);
    if (!validated.ok) return validationProblem(path, validated.errors, requestId);
    const input = validated.value;
    if (this.withReference(input.referenceId, partnerId).length > 0) {
      return collectionsError(409, 'E_DUPLICATE_REFERENCE', `A collection with referenceId ${input.referenceId} already exists`, requestId);
    }
    const nowMs = this.#options.now();
    const timestamp = new Date(nowMs).toISOString();
    const record: SimulatedCollection = {
      id: this.#options.generateId(),
      referenceId: input.referenceId,
      productId: input.productId,
      phoneNumber: input.phoneNumber,
      amount: input.amount,
      currency: 'ZMW',
      narration: input.narration,
      status: 'pending',
      transactionCode: null,
      reason: null,
      createdAt: timestamp,
      updatedAt: timestamp,
    };
    const planned = this.#options.settlement.plannedFor(input.phoneNumber);
    const entry: CollectionEntry = { partnerId, createdMs: nowMs, record, planned, statusChecks: 0 };
    this.#collections.push(entry);
    this.#byReference.set(record.referenceId, [...(this.#byReference.get(record.referenceId) ?? []), entry]);
    return json(202, { success: true, data: { referenceId: record.referenceId, status: this.#word(record.status) } }, requestId);
  }

  #checkStatus(context: RouteContext): SimulatorResponse {
    const auth = this.#options.auth.authenticate(context, 'collections');
    if (!auth.ok) return auth.response;
    const referenceId = context.params.referenceId ?? '';
    if (!UUID_PATTERN.test(referenceId)) {
      return validationProblem(
        context.path,
        [{ message: 'The referenceId field must be a valid UUID', rule: 'uuid', field: 'params.referenceId' }],
        context.requestId,
      );
    }
    const [entry] = this.withReference(referenceId, auth.value.partnerId);
    if (entry === undefined) {
      return collectionsError(404, 'E_NOT_FOUND', `No collection with referenceId ${referenceId}`, context.requestId);
    }
    entry.statusChecks++;
    this.#options.settlement.settleIfDue(entry);
    const { record } = entry;
    const field = this.#options.vocabulary?.statusField ?? 'statusText';
    return json(
      200,
      {
        success: true,
        data: {
          referenceId: record.referenceId,
          [field]: this.#word(record.status),
          transactionCode: record.transactionCode,
          reason: record.reason,
        },
      },
      context.requestId,
    );
  }

  #getCollection(context: RouteContext): SimulatorResponse {
    const auth = this.#options.auth.authenticate(context, 'collections');
    if (!auth.ok) return auth.response;
    const id = context.params.id ?? '';
    const entry = this.#collections.find((candidate) => candidate.partnerId === auth.value.partnerId && candidate.record.id === id);
    if (entry === undefined) return collectionsError(404, 'E_NOT_FOUND', `No collection with id ${id}`, context.requestId);
    this.#options.settlement.settleIfDue(entry);
    return json(200, { success: true, data: { ...entry.record, status: this.#word(entry.record.status) } }, context.requestId);
  }

  /** A status in the vocabulary this service speaks. */
  #word(status: SimulatedCollection['status']): string {
    return this.#options.vocabulary?.[status] ?? status;
  }

  #health(context: RouteContext): SimulatorResponse {
    // Any authenticated key may check health: it verifies credentials, not permissions.
    const auth = this.#options.auth.authenticate(context, undefined);
    if (!auth.ok) return auth.response;
    return json(200, { status: 'ok' }, context.requestId);
  }
}

function validateCollectionInput(
  body: unknown,
  partnerId: string,
  products: SimulatorFixtures['products'],
):
  | { ok: true; value: { productId: string; referenceId: string; phoneNumber: string; amount: number; narration: string | null } }
  | { ok: false; errors: FieldError[] } {
  if (body === undefined) body = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, errors: [{ message: 'The request body must be a JSON object', rule: 'object', field: 'body' }] };
  }
  const fields = body as Record<string, unknown>;
  const errors: FieldError[] = [];
  const fail = (name: string, rule: string, message: string) => {
    errors.push({ message, rule, field: `body.${name}` });
  };
  const requiredString = (name: string): string | undefined => {
    const value = fields[name];
    if (value === undefined || value === null) fail(name, 'required', `The ${name} field must be defined`);
    else if (typeof value !== 'string') fail(name, 'string', `The ${name} field must be a string`);
    else return value;
    return undefined;
  };

  const productId = requiredString('productId');
  if (productId !== undefined) {
    if (!UUID_PATTERN.test(productId)) fail('productId', 'uuid', 'The productId field must be a valid UUID');
    else if (!products.some((product) => product.productId.toLowerCase() === productId.toLowerCase() && product.partnerId === partnerId)) {
      fail('productId', 'exists', 'The selected productId is invalid');
    }
  }
  const referenceId = requiredString('referenceId');
  if (referenceId !== undefined && !UUID_PATTERN.test(referenceId))
    fail('referenceId', 'uuid', 'The referenceId field must be a valid UUID');
  const phoneNumber = requiredString('phoneNumber');
  if (phoneNumber !== undefined && !ZAMBIAN_MOBILE.test(phoneNumber)) {
    fail('phoneNumber', 'mobile', 'The phoneNumber field must be a valid Zambian mobile number');
  }
  const currency = requiredString('currency');
  if (currency !== undefined && currency !== 'ZMW') fail('currency', 'enum', 'The selected currency is invalid; it must be ZMW');

  const amount = fields.amount;
  if (amount === undefined || amount === null) fail('amount', 'required', 'The amount field must be defined');
  else if (typeof amount !== 'number' || !Number.isFinite(amount)) fail('amount', 'number', 'The amount field must be a number');
  else if (amount < 1) fail('amount', 'min', 'The amount field must be at least 1');
  else if (amount > 10_000) fail('amount', 'max', 'The amount field must not be greater than 10000');
  else if (!hasAtMostTwoDecimals(amount)) fail('amount', 'decimal', 'The amount field must have at most 2 decimal places');

  const narration = fields.narration;
  if (narration !== undefined && narration !== null) {
    if (typeof narration !== 'string') fail('narration', 'string', 'The narration field must be a string');
    else if (narration.length > 100) fail('narration', 'maxLength', 'The narration field must not be greater than 100 characters');
  }

  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    value: {
      productId: productId as string,
      referenceId: referenceId as string,
      phoneNumber: phoneNumber as string,
      amount: amount as number,
      narration: typeof narration === 'string' ? narration : null,
    },
  };
}
