/**
 * API keys: which header each service reads its key from, and the 401/403 answers for missing, unknown, revoked,
 * expired and under-privileged keys, in each service's envelope.
 *
 * @module
 */
import type { ApiKeyFixture, PartnerFixture, Permission, SimulatedService, SimulatorFixtures } from '../fixtures.js';
import { serviceError } from './envelopes.js';
import type { RouteContext, SimulatorResponse } from './exchange.js';

/** A value, or the error response that replaces it. */
export type Resolved<T> = { ok: true; value: T } | { ok: false; response: SimulatorResponse };

/** The key a request presents: Tap's `x-api-key`, Collections' `Authorization: Bearer`. */
export function presentedApiKey(service: SimulatedService, headers: Readonly<Record<string, string>>): string | undefined {
  if (service === 'tap') {
    const key = headers['x-api-key']?.trim();
    return key ? key : undefined;
  }
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? '');
  return match?.[1];
}

const UNAUTHORIZED = { tap: 'auth/unauthorized-error', collections: 'E_UNAUTHORIZED' } as const;
const FORBIDDEN = { tap: 'auth/forbidden-error', collections: 'E_FORBIDDEN' } as const;

/** The seeded partners and their keys. */
export class Authenticator {
  readonly #partners = new Map<string, PartnerFixture>();
  readonly #keys = new Map<string, ApiKeyFixture>();

  constructor(fixtures: Pick<SimulatorFixtures, 'partners' | 'apiKeys'>) {
    for (const partner of fixtures.partners) this.#partners.set(partner.partnerId, partner);
    for (const key of fixtures.apiKeys) this.#keys.set(key.key, key);
  }

  /** The partner a key belongs to, whatever the key's state or service; `undefined` for an unknown key. */
  partnerIdOf(key: string | undefined): string | undefined {
    return key === undefined ? undefined : this.#keys.get(key)?.partnerId;
  }

  /**
   * The partner behind the request's key, or the service's 401 (no, unknown, revoked or expired key, or a key of the
   * other service) or 403 (a key without `permission`; `undefined` requires none).
   */
  authenticate(context: RouteContext, permission: Permission | undefined): Resolved<PartnerFixture> {
    const { service } = context.request;
    const key = presentedApiKey(service, context.request.headers);
    const fixture = key === undefined ? undefined : this.#keys.get(key);
    const fail = (status: 401 | 403, message: string): Resolved<PartnerFixture> => ({
      ok: false,
      response: serviceError(service, status, status === 401 ? UNAUTHORIZED : FORBIDDEN, message, context.requestId),
    });
    if (key === undefined) {
      return fail(
        401,
        service === 'tap' ? 'The x-api-key header is missing' : 'The Authorization header is missing or is not a Bearer token',
      );
    }
    if (fixture === undefined || fixture.service !== service) return fail(401, 'The API key is invalid');
    if (fixture.state === 'revoked') return fail(401, 'The API key has been revoked');
    if (fixture.state === 'expired') return fail(401, 'The API key has expired');
    const partner = this.#partners.get(fixture.partnerId);
    if (partner === undefined) return fail(401, 'The API key is invalid');
    if (permission !== undefined && !fixture.permissions.includes(permission)) {
      return fail(
        403,
        permission === 'customer-queries'
          ? 'The API key is not authorized for customer queries'
          : 'The API key is not authorized for collections',
      );
    }
    return { ok: true, value: partner };
  }
}
