/**
 * Reconciling a `submitCustomerQuery` whose outcome was unknown, on a real HTTP server: the call's own
 * query is recognised by its referenceId (and the fields it echoes, amounts to the cent), one malformed
 * row of another query does not hide it, a list that lags never turns it into "not created", and only
 * another query holding one of the call's unique keys proves that nothing was created.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, InternalServerError, ResponseValidationError, TapClient, UnknownOutcomeError } from '../../src/index.js';
import { type FaultServer, type FaultServerOptions, startFaultServer, TAP_KEY } from '../faults/fault-server.js';
import { customerQueryInput } from '../helpers/fixtures.js';
import { rejectionOf } from '../helpers/tap.js';

const REFERENCE_ID = '5d8c2b1e-3f4a-4b6c-9d7e-8f0a1b2c3d4e';
const servers: FaultServer[] = [];

async function serverWith(options: FaultServerOptions = {}): Promise<FaultServer> {
  const server = await startFaultServer(options);
  servers.push(server);
  return server;
}

const clientOf = (server: FaultServer) => new TapClient({ apiKey: TAP_KEY, baseUrl: server.url, maxRetries: 1, logLevel: 'off' });
const ownRecords = (server: FaultServer) => server.tapQueries.filter(({ query }) => query.transaction.referenceId === REFERENCE_ID);

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe('submitCustomerQuery: recognising its own query after an unknown outcome', () => {
  it('resolves with its query when the service rounded the amount (10.005 → 10.01)', async () => {
    const server = await serverWith({ roundTapAmounts: true });
    server.fault('POST queries', { kind: 'reset-after-commit' });
    const query = await clientOf(server).submitCustomerQuery(customerQueryInput({ referenceId: REFERENCE_ID, amount: 10.005 }));
    expect(query.transaction.amount).toBe(10.01);
    expect(query).toEqual(ownRecords(server)[0]?.query);
    expect(server.counts()).toEqual({ 'POST queries': 2, 'GET queries': 1 });
  });

  it('resolves with its query when another row of the list is malformed', async () => {
    const server = await serverWith();
    server.seedRawTapRow({ id: 'broken', transaction: { referenceId: 42 }, customer: null });
    server.seedRawTapRow('not even an object');
    server.fault('POST queries', { kind: 'reset-after-commit' });
    const query = await clientOf(server).submitCustomerQuery(customerQueryInput({ referenceId: REFERENCE_ID }));
    expect(query).toEqual(ownRecords(server)[0]?.query);
  });

  it('rejects with UnknownOutcomeError (never a definite error) when its own row is malformed', async () => {
    const server = await serverWith();
    const input = customerQueryInput({ referenceId: REFERENCE_ID });
    // The service holds this call's query but lists it without its customer and partner.
    server.seedRawTapRow({ transaction: { ...input, referenceId: REFERENCE_ID }, tag: { tagId: input.tagId } });
    server.fault('POST queries', { kind: 'status', status: 500, body: 'json', retryAfter: '0' }, Number.POSITIVE_INFINITY);
    const error = await rejectionOf(clientOf(server).submitCustomerQuery(input));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).referenceId).toBe(REFERENCE_ID);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(InternalServerError);
  });

  it('rejects with UnknownOutcomeError when the list lags behind the create (the 409 is its own query)', async () => {
    const server = await serverWith({ lagMs: 5_000 });
    server.seedTapQuery({
      ...customerQueryInput(),
      merchantId: 'm-unrelated',
      terminalId: 't-unrelated',
      referenceId: crypto.randomUUID(),
    });
    server.fault('POST queries', { kind: 'reset-after-commit' });
    const error = await rejectionOf(clientOf(server).submitCustomerQuery(customerQueryInput({ referenceId: REFERENCE_ID })));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(ConflictError);
    // What the lookup saw, said as no proof either way.
    expect((error as UnknownOutcomeError).seen).toBe('nothing-yet');
    expect((error as Error).message).toContain('the lookup found nothing yet, which proves nothing');
    expect(ownRecords(server)).toHaveLength(1);
  });
});

describe('submitCustomerQuery: what proves that nothing was created', () => {
  const earlier = { merchantName: 'Earlier', amount: 5, tagId: 'TAG-0001' };

  it.for([
    { holds: 'terminalId', seed: { ...earlier, merchantId: 'm-earlier', terminalId: 'terminal-001', referenceId: crypto.randomUUID() } },
    { holds: 'merchantId', seed: { ...earlier, merchantId: 'merchant-001', terminalId: 't-earlier', referenceId: crypto.randomUUID() } },
    {
      holds: 'referenceId (another amount)',
      seed: { ...earlier, merchantId: 'merchant-001', terminalId: 'terminal-001', referenceId: REFERENCE_ID },
    },
  ])('another query holding its $holds: the 409 stands as ConflictError', async ({ seed }) => {
    const server = await serverWith();
    server.seedTapQuery(seed);
    server.fault('POST queries', { kind: 'reset-before-headers' });
    const error = await rejectionOf(clientOf(server).submitCustomerQuery(customerQueryInput({ referenceId: REFERENCE_ID })));
    expect(error).toBeInstanceOf(ConflictError);
    expect(server.tapQueries).toHaveLength(1);
  });

  it('a malformed own row found by a read-back of an unreadable 2xx is never a definite error', async () => {
    const server = await serverWith();
    // A 200 HTML page, and the service lists this call's query malformed.
    server.fault('POST queries', { kind: 'status', status: 200, body: 'html' });
    server.seedRawTapRow({ transaction: { referenceId: REFERENCE_ID, merchantId: 'merchant-001', terminalId: 'terminal-001' } });
    const error = await rejectionOf(clientOf(server).submitCustomerQuery(customerQueryInput({ referenceId: REFERENCE_ID })));
    expect(error).toBeInstanceOf(UnknownOutcomeError);
    expect((error as UnknownOutcomeError).cause).toBeInstanceOf(ResponseValidationError);
  });
});
