// Loaded with `node --import`: registers a resolve hook that appends every resolved module URL to
// the file named by GIFTDROP_MODULE_LOG (one per line). Used to check what live start-up loads.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
import { appendFileSync } from 'node:fs';
const file = process.env.GIFTDROP_MODULE_LOG;
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (file) appendFileSync(file, r.url + '\\n');
  return r;
}`),
);
