// Loaded with `node --import`: registers a resolve hook that appends every resolved module URL to
// the file named by GIFTDROP_MODULE_LOG (one per line), and appends the line `# http listening`
// when an HTTP server of the process starts listening (the bot's: webhooks and /healthz), so a
// test can tell what was loaded before readiness from what was loaded after it. Used to check
// what live start-up loads.
import { appendFileSync } from 'node:fs';
import { Server } from 'node:http';
import { register } from 'node:module';

/** Also spelled out in test/live-startup-modules.test.ts (importing this file would run it). */
const LISTENING_MARK = '# http listening';

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

const file = process.env.GIFTDROP_MODULE_LOG;
const listen = Server.prototype.listen;
Server.prototype.listen = function (...args) {
  // Registered before the caller's own callback, so the mark precedes anything that follows it.
  if (file) this.once('listening', () => appendFileSync(file, `${LISTENING_MARK}\n`));
  return listen.apply(this, args);
};
