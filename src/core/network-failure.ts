/**
 * How a network step of an attempt failed, as the error the caller gets: its abort, the attempt's timeout, the
 * runtime's refusal, or a connection failure saying whether the request may have reached the service.
 *
 * @module
 */
import { NetworkError as KyNetworkError } from 'ky';
import { classifyConnectionFailure, connectionFailureReason, speaksNoTls } from './connection-failure.js';
import { ConfigurationError, ConnectionError, TapCollectionsError, TimeoutError } from './errors.js';
import type { SecretRedactor } from './redact.js';
import type { CallSettings } from './transport-types.js';

/**
 * Classifies how a network step (the fetch, a body read) failed: the caller's abort, the attempt's timeout,
 * or the connection. Only these steps are classified, so a defect elsewhere surfaces as itself instead of
 * posing as a network failure. `method` is the fetch's, given only for the fetch step (a body read comes after an
 * answer, so its failure is never the base URL's scheme).
 */
export function networkFailure(
  error: unknown,
  settings: CallSettings,
  attemptSignal: AbortSignal,
  origin: string,
  secrets: SecretRedactor,
  method?: string,
): unknown {
  if (settings.signal?.aborted) return settings.signal.reason;
  // Not the caller's signal, so the attempt's own timer fired.
  if (attemptSignal.aborted) return new TimeoutError(settings.timeoutMs);
  if (error instanceof TapCollectionsError) return error;
  // ky wraps network failures with the Request (and so the key); keep only the runtime's own error.
  const cause = error instanceof KyNetworkError ? error.cause : error;
  const failure = classifyConnectionFailure(cause);
  if (failure === 'permission-denied') {
    return new ConfigurationError('The runtime refused network access (Deno: run with --allow-net); nothing was sent', { cause });
  }
  const sent = failure === 'may-have-been-sent';
  // The host only: a path or query may carry a reference or a phone number; scrubbed in case a key was pasted into it.
  const host = secrets.scrub(new URL(origin).host);
  if (method !== undefined && speaksNoTls(cause)) {
    const fault = `baseUrl https://${host} does not answer in TLS (a plain-HTTP server there? use its https: address, or http: for a loopback host)`;
    // A read (GET, HEAD) changes nothing at the service: the fault is the configuration's, said as such. A create
    // keeps the safe reading: the error alone cannot prove the handshake failed before the request left.
    if (method === 'GET' || method === 'HEAD') return new ConfigurationError(`Invalid client options: ${fault}`, { cause });
    return new ConnectionError(`${fault}; the request may have reached the service`, { cause, requestMayHaveBeenSent: true, host });
  }
  const reason = sent ? undefined : connectionFailureReason(cause);
  const message = sent
    ? `The connection to ${host} failed; the request may have reached the service`
    : reason === 'dns-lookup-failed'
      ? `Could not resolve the host ${host} (DNS lookup failed); nothing was sent. Check baseUrl and this machine's DNS`
      : reason === 'connection-refused'
        ? `${host} refused the connection (nothing listens there); nothing was sent`
        : `Could not connect to ${host}; nothing was sent`;
  return new ConnectionError(message, { cause, requestMayHaveBeenSent: sent, host, reason });
}
