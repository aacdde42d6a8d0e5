/**
 * Lets a benchmark import the project's TypeScript sources (the simulation and the chaos soak run the SDK's internals,
 * not the built package): a relative `.js` import that has no file beside it resolves to the `.ts` source, as
 * TypeScript's own resolution does. Imported for its effect, before the sources are.
 */
import { existsSync } from 'node:fs';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';

registerHooks({
  resolve(specifier, context, nextResolve) {
    if (specifier.startsWith('.') && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
      const asWritten = new URL(specifier, context.parentURL);
      const source = new URL(specifier.replace(/\.js$/, '.ts'), context.parentURL);
      if (!existsSync(fileURLToPath(asWritten)) && existsSync(fileURLToPath(source))) return nextResolve(source.href, context);
    }
    return nextResolve(specifier, context);
  },
});
