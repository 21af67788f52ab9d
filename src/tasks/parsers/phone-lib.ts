import { createRequire } from 'node:module';

type PhoneLib = typeof import('libphonenumber-js');

const require = createRequire(import.meta.url);
let lib: PhoneLib | undefined;

/**
 * libphonenumber-js, loaded on first use: its metadata costs ~60 ms to load, which every
 * `import 'taskline'` would otherwise pay although most bots never parse a phone number.
 * Parsers are synchronous, so this is a synchronous `require` of the package's CJS build.
 */
export function phoneLib(): PhoneLib {
  lib ??= require('libphonenumber-js') as PhoneLib;
  return lib;
}
