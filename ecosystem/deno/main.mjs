// A partner's Deno app:
//   deno run --allow-net=127.0.0.1 --allow-env=TAP_API_KEY,TAP_BASE_URL,COLLECTIONS_API_KEY,COLLECTIONS_BASE_URL main.mjs '<setup JSON>'
// The SDK needs --allow-net for the services' hosts, and --allow-env only for the variables it reads as defaults.
import * as sdk from 'tap-collections-sdk';
import { runFlow } from './flow.mjs';

const results = await runFlow(sdk, JSON.parse(Deno.args[0]));
console.log(`FLOW_RESULTS ${JSON.stringify(results)}`);
