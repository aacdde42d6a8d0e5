// A partner's Node.js app, ESM: `node main.mjs '<setup JSON>'`.
import * as sdk from 'tap-collections-sdk';
import { runFlow } from './flow.mjs';

const results = await runFlow(sdk, JSON.parse(process.argv[2]));
console.log(`FLOW_RESULTS ${JSON.stringify(results)}`);
