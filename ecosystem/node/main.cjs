// A partner's Node.js app, CommonJS: `node main.cjs '<setup JSON>'`. The SDK comes through require(); the shared flow is ESM.
const sdk = require('tap-collections-sdk');

import('./flow.mjs')
  .then(({ runFlow }) => runFlow(sdk, JSON.parse(process.argv[2])))
  .then((results) => console.log(`FLOW_RESULTS ${JSON.stringify(results)}`));
