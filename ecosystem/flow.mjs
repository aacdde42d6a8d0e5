/**
 * The one flow every consumer project runs, whatever the runtime: a partner's whole journey against the simulator
 * over loopback, plus the failures a partner must be able to tell apart. Each runtime's entry (a few lines) imports
 * the SDK its own way and calls `runFlow(sdk, setup)`; the result is one `{ step, ok, detail }` per step.
 *
 * `setup` (JSON, from the runner):
 * - `tapBaseUrl`, `collectionsBaseUrl`: the simulator; `refusedBaseUrl`: a loopback port nothing listens on;
 * - `fixtures`: `{ tapKey, collectionsKey, tag, product, phone, neverSettles }` (the simulator's fixtures);
 * - `network`: `'granted'` or `'denied'` (Deno without `--allow-net`);
 * - `env`: `'granted'` (the four variables are set), `'denied'` (Deno without `--allow-env`) or `'none'` (a browser page);
 * - `refusal`: `'provable'` when the runtime's error proves a refused connection sent nothing, `'unprovable'` when it
 *   cannot (workerd, browsers): then the SDK must keep the safe reading;
 * - `browser`: true in a browser page (clients need `dangerouslyAllowBrowser`).
 */

const SHORT_POLL = { initialDelayMs: 0, intervalMs: 10, maxIntervalMs: 20 };

/** Runs every step that applies to `setup`, in order; never throws. */
export async function runFlow(sdk, setup) {
  const results = [];
  const step = async (name, body) => {
    try {
      const detail = await body();
      results.push({ step: name, ok: true, detail: detail ?? '' });
    } catch (error) {
      results.push({ step: name, ok: false, detail: describe(error) });
    }
  };
  const base = { logLevel: 'off', ...(setup.browser ? { dangerouslyAllowBrowser: true } : {}) };
  const { fixtures } = setup;
  const tap = new sdk.TapClient({ ...base, apiKey: fixtures.tapKey, baseUrl: setup.tapBaseUrl });
  const collections = new sdk.CollectionsClient({ ...base, apiKey: fixtures.collectionsKey, baseUrl: setup.collectionsBaseUrl });
  const payment = (phoneNumber) => ({ productId: fixtures.product, phoneNumber, amount: 5 });

  if (setup.network === 'denied') {
    await step('health', async () => {
      const error = await rejection(collections.health());
      expectError(error, sdk.ConfigurationError, /--allow-net/);
      return 'ConfigurationError (--allow-net)';
    });
    await step('initiate', async () => {
      const error = await rejection(collections.initiate(payment(fixtures.phone)));
      expectError(error, sdk.ConfigurationError, /nothing was sent/);
      return 'ConfigurationError, not UnknownOutcomeError';
    });
    await step('env defaults', () => envDefaults(sdk, setup, base));
    return results;
  }

  let query;
  let referenceId;
  await step('health', async () => {
    await collections.health();
    return 'ok';
  });
  await step('tap query', async () => {
    // merchantId and terminalId are unique per query (the service refuses a repeat): one simulator serves every runtime.
    const run = crypto.randomUUID().slice(0, 8);
    const input = { merchantId: `M-${run}`, merchantName: 'Shop', terminalId: `T-${run}`, amount: 5, tagId: fixtures.tag };
    query = await tap.submitCustomerQuery(input);
    check(query.tag.tagId === fixtures.tag, `query for ${query.tag.tagId}`);
    return `${query.customer.firstName} ${query.customer.lastName}`;
  });
  await step('mobileNumberFor', () => {
    const number = sdk.mobileNumberFor(query);
    check(number === fixtures.phone, `got ${number}`);
    return number;
  });
  await step('initiate', async () => {
    const accepted = await collections.initiate(payment(sdk.mobileNumberFor(query)));
    referenceId = accepted.referenceId;
    return accepted.status;
  });
  await step('poll to settled', async () => {
    const status = await collections.pollUntilSettled(referenceId, { ...SHORT_POLL, maxWaitMs: 10_000 });
    check(status.statusText === 'successful', `settled as ${status.statusText}`);
    return `${status.statusText} ${status.transactionCode}`;
  });
  await step('RequestValidationError', async () => {
    const error = await rejection(collections.initiate({ productId: 'not-a-uuid', phoneNumber: fixtures.phone, amount: -1 }));
    expectError(error, sdk.RequestValidationError, /productId/);
    return 'names productId';
  });
  await step('AuthenticationError', async () => {
    const stranger = new sdk.TapClient({ ...base, apiKey: 'not-a-key', baseUrl: setup.tapBaseUrl });
    expectError(await rejection(stranger.listCustomerQueries()), sdk.AuthenticationError);
    return 'HTTP 401';
  });
  await step('abort mid-poll', async () => {
    const { referenceId: pending } = await collections.initiate(payment(fixtures.neverSettles));
    const controller = new AbortController();
    const reason = new Error('the till closed');
    setTimeout(() => controller.abort(reason), 50);
    const error = await rejection(collections.pollUntilSettled(pending, { ...SHORT_POLL, maxWaitMs: 10_000, signal: controller.signal }));
    check(error === reason, `rejected with ${describe(error)}`);
    return "the signal's reason";
  });
  await step('PollTimeoutError', async () => {
    const { referenceId: pending } = await collections.initiate(payment(fixtures.neverSettles));
    const error = await rejection(collections.pollUntilSettled(pending, { ...SHORT_POLL, maxWaitMs: 150 }));
    expectError(error, sdk.PollTimeoutError);
    check(error.lastStatus?.statusText === 'pending', `lastStatus ${error.lastStatus?.statusText}`);
    return 'lastStatus pending';
  });
  await step('refused connection', async () => {
    const refused = new sdk.CollectionsClient({ ...base, apiKey: fixtures.collectionsKey, baseUrl: setup.refusedBaseUrl, maxRetries: 0 });
    const health = await rejection(refused.health());
    expectError(health, sdk.ConnectionError);
    const initiate = await rejection(refused.initiate(payment(fixtures.phone)));
    if (setup.refusal === 'provable') {
      check(health.requestMayHaveBeenSent === false, 'health: requestMayHaveBeenSent should be false');
      expectError(initiate, sdk.ConnectionError);
      check(initiate.requestMayHaveBeenSent === false, 'initiate: requestMayHaveBeenSent should be false');
      return 'not sent';
    }
    // The runtime cannot tell a refusal from a cut after sending: the safe reading must stand.
    check(health.requestMayHaveBeenSent === true, 'health: the safe reading (may have been sent) should stand');
    expectError(initiate, sdk.UnknownOutcomeError);
    return 'cannot tell: may have been sent (safe reading)';
  });
  await step('blocked port', () => {
    // fetch refuses these ports (Node.js, Deno, browsers): the client refuses them at once, before any request.
    const construct = () => new sdk.CollectionsClient({ ...base, apiKey: fixtures.collectionsKey, baseUrl: 'http://127.0.0.1:6000' });
    expectError(thrownBy(construct), sdk.ConfigurationError, /port 6000/);
    return 'ConfigurationError at construction';
  });
  await step('env defaults', () => envDefaults(sdk, setup, base));
  return results;
}

async function envDefaults(sdk, setup, base) {
  if (setup.env === 'granted') {
    await new sdk.CollectionsClient(base).health();
    await new sdk.TapClient(base).listCustomerQueries();
    return 'read from the environment';
  }
  if (setup.env === 'denied') {
    expectError(
      thrownBy(() => new sdk.TapClient(base)),
      sdk.ConfigurationError,
      /--allow-env=TAP_API_KEY/,
    );
    // Explicit options read nothing from the environment, so they need no permission.
    new sdk.TapClient({ ...base, apiKey: setup.fixtures.tapKey, baseUrl: setup.tapBaseUrl });
    return 'ConfigurationError (--allow-env); explicit options work';
  }
  // A browser page has no environment; and without dangerouslyAllowBrowser a client refuses to exist there.
  expectError(
    thrownBy(() => new sdk.TapClient(base)),
    sdk.ConfigurationError,
    /TAP_API_KEY/,
  );
  const explicit = { logLevel: 'off', apiKey: setup.fixtures.tapKey, baseUrl: setup.tapBaseUrl };
  expectError(
    thrownBy(() => new sdk.TapClient(explicit)),
    sdk.ConfigurationError,
    /browser/,
  );
  return 'no environment; refused without dangerouslyAllowBrowser';
}

function thrownBy(construct) {
  try {
    construct();
  } catch (error) {
    return error;
  }
  return undefined;
}

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but it resolved');
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

function expectError(error, type, pattern) {
  check(error instanceof type, `expected ${type.name}, got ${describe(error)}`);
  check(error instanceof Error && error.name === type.name, `name ${error?.name}`);
  if (pattern) check(pattern.test(error.message), `expected ${type.name} to match ${pattern}, got: ${error.message}`);
}

function describe(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return String(error);
}
