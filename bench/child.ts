/**
 * `node bench/child.ts <module URL> <export>`: the entry of a benchmark's child process (see `spawnBenchChild` in
 * `harness.ts`); calls the module's exported function and lets the process live as long as that keeps it busy.
 */
const [moduleUrl, exportName] = process.argv.slice(2);
if (moduleUrl === undefined || exportName === undefined) throw new Error('usage: node bench/child.ts <module URL> <export>');
const module = (await import(moduleUrl)) as Record<string, unknown>;
const entry = module[exportName];
if (typeof entry !== 'function') throw new Error(`${moduleUrl} exports no function ${exportName}`);
await (entry as () => unknown)();
