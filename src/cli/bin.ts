#!/usr/bin/env node
/**
 * The `tap-collections-sdk` bin (built to `dist/cli/bin.js`): `simulate`, `status`, `poll`, `recover`,
 * `journal list|show` and `worker`. The commands live beside it, one per file; see `docs/guide/operating.md`.
 *
 * @module
 */
import { main } from './main.js';

void main(process.argv.slice(2));
