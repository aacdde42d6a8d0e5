/**
 * What a failed `fetch` proves, read per runtime. Each runtime words its failures differently, and only
 * some words prove that the request never left this machine; everything else keeps the safe reading
 * ("the request may have reached the service"), which makes a create reconcile instead of resending.
 *
 * | runtime | refused connection | refused port (fetch's "bad ports") | permission refused |
 * | --- | --- | --- | --- |
 * | Node.js (undici) | `code` `ECONNREFUSED` in the cause chain | cause message `bad port` | — |
 * | Bun | `code` `ECONNREFUSED` on the error | (not blocked: connects, so refused like any port) | — |
 * | Deno | cause message `tcp connect error: Connection refused (os error 111)`, no `code` | `Requests to port N are blocked` | `NotCapable` (`--allow-net`) |
 * | workerd | `Network connection lost.` (also said of a connection cut after sending: cannot tell) | same | — |
 * | browsers | `TypeError: Failed to fetch` (also said after sending: cannot tell) | same | — |
 *
 * @module
 */

/** What a failed fetch proves: nothing was sent, the runtime refused network access, or nothing (maybe sent). */
export type ConnectionFailure = 'not-sent' | 'permission-denied' | 'may-have-been-sent';

/** Error codes (Node.js, Bun) that prove the request never left this machine. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ConnectionRefused',
]);

/**
 * Messages, from runtimes that give no `code`, that prove the request never left: Deno's connect errors
 * (DNS, refused, unreachable) and the refusals of fetch's blocked-port list (undici's `bad port`, Deno's
 * `Requests to port N are blocked`). Anchored on the runtime's own wording, never on a bare `refused`, which
 * a server's reset could also contain.
 */
const NOT_SENT_MESSAGES: readonly RegExp[] = [
  /^bad port$/,
  /Requests to port \d+ are blocked/,
  /tcp connect error: Connection refused/,
  /tcp connect error: Network is unreachable/,
  /tcp connect error: No route to host/,
  /dns error: failed to lookup address information/,
];

/** Error names a runtime uses to refuse network access by permission (Deno 2: `NotCapable`; Deno 1: `PermissionDenied`). */
const PERMISSION_ERROR_NAMES: ReadonlySet<string> = new Set(['NotCapable', 'PermissionDenied']);

/** How far down the `cause` chain to look: runtimes wrap at most two or three times. */
const MAX_CAUSE_DEPTH = 5;

/**
 * Reads what a fetch failure (the runtime's own error, with its `cause` chain) proves about the request. The first
 * error in the chain that carries a `code` decides by it (as before, for Node.js and Bun); the wording of code-less
 * errors (Deno's, undici's `bad port`) counts only where no code was given.
 */
export function classifyConnectionFailure(error: unknown): ConnectionFailure {
  for (const current of causeChain(error)) {
    const { name, code, message } = current as { name?: unknown; code?: unknown; message?: unknown };
    if (typeof name === 'string' && PERMISSION_ERROR_NAMES.has(name)) return 'permission-denied';
    if (typeof code === 'string') return NOT_SENT_CODES.has(code) ? 'not-sent' : 'may-have-been-sent';
    if (typeof message === 'string' && NOT_SENT_MESSAGES.some((pattern) => pattern.test(message))) return 'not-sent';
  }
  return 'may-have-been-sent';
}

/** What a runtime said about a connection that never carried the request, where it says: as `ConnectionError.reason` gives it. @group Errors */
export type ConnectionFailureReason = 'dns-lookup-failed' | 'connection-refused';

/** Codes (Node.js/undici, Bun) and Deno's wording for a host name that did not resolve, and for a refused connection. */
const DNS_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'EAI_AGAIN']);
const REFUSED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ConnectionRefused']);
const DNS_MESSAGE = /dns error: failed to lookup address information/;
const REFUSED_MESSAGE = /tcp connect error: Connection refused/;

/**
 * Whether the runtime said the host name did not resolve or the connection was refused; `undefined` where it
 * said neither (workerd and browsers never do). Read like {@link classifyConnectionFailure}: the first code decides.
 */
export function connectionFailureReason(error: unknown): ConnectionFailureReason | undefined {
  for (const current of causeChain(error)) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (typeof code === 'string') {
      if (DNS_CODES.has(code)) return 'dns-lookup-failed';
      return REFUSED_CODES.has(code) ? 'connection-refused' : undefined;
    }
    if (typeof message === 'string' && DNS_MESSAGE.test(message)) return 'dns-lookup-failed';
    if (typeof message === 'string' && REFUSED_MESSAGE.test(message)) return 'connection-refused';
  }
  return undefined;
}

/**
 * OpenSSL's codes (Node.js) for a peer whose answer to the TLS handshake is not TLS at all: an `https:` base URL
 * pointing at a server that speaks plain HTTP.
 */
const NOT_TLS_CODES: ReadonlySet<string> = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);

/** True when the runtime said the server answered the TLS handshake with something that is not TLS. */
export function speaksNoTls(error: unknown): boolean {
  for (const current of causeChain(error)) {
    const { code } = current as { code?: unknown };
    if (typeof code === 'string') return NOT_TLS_CODES.has(code);
  }
  return false;
}

function* causeChain(error: unknown): Generator<object> {
  let current = error;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < MAX_CAUSE_DEPTH; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/**
 * The ports fetch refuses to connect to (the Fetch standard's "bad ports", as undici and browsers apply them).
 * A base URL on one of them could never be reached from Node.js, Deno or a browser.
 */
export const BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117,
  119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636,
  989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/** True for a port on fetch's blocked list ({@link BLOCKED_PORTS}). */
export function isBlockedPort(port: number): boolean {
  return BLOCKED_PORTS.has(port);
}
