// A trusted internal tool's page (bundled). The key is visible to anyone who can open the page: hence
// dangerouslyAllowBrowser, which the flow passes in a browser. The setup comes in the URL's fragment.
import * as sdk from 'tap-collections-sdk';
import { runFlow } from './flow.mjs';

const setup = JSON.parse(decodeURIComponent(location.hash.slice(1)));
window.flowResults = await runFlow(sdk, setup);
