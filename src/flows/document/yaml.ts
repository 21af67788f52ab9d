/**
 * The `yaml` package, loaded on first use: it costs ~100 ms to load, so `import 'taskline'`
 * must not pay for it unless a flow document is read or written. Its CommonJS build is
 * required synchronously, so `loadFlow` stays synchronous.
 */
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';

let loaded: typeof Yaml | undefined;

/** The yaml module (loaded once, on the first call). */
export function yaml(): typeof Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as typeof Yaml;
  return loaded;
}
