#!/usr/bin/env node
/**
 * The `tap-collections-sdk` bin (built to `dist/testing/cli.js`): `simulate`, `status`, `poll`, `recover`,
 * `journal list|show` and `worker`. The commands live in `src/cli/`, one per file; see `docs/guide/operating.md`.
 *
 * @module
 */
import { main } from '../cli/main.js';

void main(process.argv.slice(2));
