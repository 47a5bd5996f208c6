// The resolve hook test/helpers/ts-resolve.mjs registers: a file `x.js` that does not exist, named by a path or by a
// file: URL (tap's mockImport adds a query), loads `x.ts` beside it, as tsc's NodeNext resolution maps it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export async function resolve(specifier, context, next) {
  const relative = specifier.startsWith('./') || specifier.startsWith('../') || specifier.startsWith('/');
  if ((relative && context.parentURL?.startsWith('file:')) || specifier.startsWith('file:')) {
    const url = new URL(specifier, context.parentURL);
    if (url.pathname.endsWith('.js') && !existsSync(fileURLToPath(url))) {
      const ts = new URL(url);
      ts.pathname = `${url.pathname.slice(0, -3)}.ts`;
      if (existsSync(fileURLToPath(ts))) return next(ts.href, context);
    }
  }
  return next(specifier, context);
}
