/**
 * The value formats the service documents define (UUIDs, Zambian mobile numbers, ngwee amounts), written here from the
 * documents rather than taken from the SDK (see the simulator's main module for why).
 *
 * @module
 */

/** A UUID, any version, any case. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A Zambian mobile number in an accepted form (`0…`, `260…`, `+260…`); group 1 is the nine national digits. */
export const ZAMBIAN_MOBILE = /^(?:\+?260|0)([79]\d{8})$/;

/** `0977…`, `+260977…` and `260977…` all become `260977…`; anything else is returned unchanged. */
export function internationalPhone(phone: string): string {
  const match = ZAMBIAN_MOBILE.exec(phone.replace(/[\s-]/g, ''));
  return match ? `260${match[1]}` : phone;
}

/** Whether `amount` is a whole number of ngwee (tolerating binary floating-point error). */
export function hasAtMostTwoDecimals(amount: number): boolean {
  const cents = amount * 100;
  return Math.abs(cents - Math.round(cents)) < 1e-6;
}
