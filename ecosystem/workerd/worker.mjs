// A partner's worker (bundled, as wrangler or esbuild would bundle it). Each request runs the flow and answers its results.
import * as sdk from 'tap-collections-sdk';
import { runFlow } from './flow.mjs';

export default {
  async fetch(_request, env) {
    return Response.json(await runFlow(sdk, JSON.parse(env.FLOW_SETUP)));
  },
};
