// A partner's Bun app: `bun main.mjs '<setup JSON>'`.
import * as sdk from 'tap-collections-sdk';
import { runFlow } from './flow.mjs';

const results = await runFlow(sdk, JSON.parse(Bun.argv[2]));
console.log(`FLOW_RESULTS ${JSON.stringify(results)}`);
