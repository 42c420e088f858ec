/**
 * TEST-ONLY, for the Windows job of .ci/run: the part of vitest's API the platform tests use,
 * on Node's own test runner (node:test) and vitest's own matchers (@vitest/expect on chai, as
 * vitest builds its `expect`). Why not vitest itself under Wine: vitest 4 runs on rolldown, whose
 * Windows binding needs bcryptprimitives.dll (absent from Wine 8) and whose WebAssembly fallback
 * cannot open Windows paths. .ci/wine-tests.mjs bundles each test file with `vitest` pointing here.
 * A test that uses an API missing here fails loudly (no export), never passes silently.
 */
import * as chai from 'chai';
import { JestAsymmetricMatchers, JestChaiExpect, JestExtend } from '@vitest/expect';
import * as nodeTest from 'node:test';

chai.use(JestExtend);
chai.use(JestChaiExpect);
chai.use(JestAsymmetricMatchers);

export const expect = Object.assign((value, message) => chai.expect(value, message), chai.expect);
expect.assert = chai.assert;

/** describe/it/test with vitest's `.skip`, `.only`, `.todo`, `.skipIf(cond)`, `.runIf(cond)`, `.each(cases)`. */
function withModifiers(run) {
  const fn = (name, body, timeout) => run(name, typeof timeout === 'number' ? { timeout } : {}, body);
  fn.skip = (name, body) => run(name, { skip: true }, body);
  fn.only = (name, body, timeout) => run(name, { only: true, ...(typeof timeout === 'number' ? { timeout } : {}) }, body);
  fn.todo = (name) => run(name, { todo: true }, () => undefined);
  fn.skipIf = (cond) => (cond ? fn.skip : fn);
  fn.runIf = (cond) => (cond ? fn : fn.skip);
  // .each(cases)(name, body): one test per case; `%s` in the name is the case, an array case is spread.
  fn.each = (cases) => (name, body, timeout) => {
    for (const c of cases) {
      const args = Array.isArray(c) ? c : [c];
      fn(name.replace(/%[sdi]/, () => String(args[0])), () => body(...args), timeout);
    }
  };
  return fn;
}
export const describe = withModifiers((name, options, body) => nodeTest.describe(name, options, body));
export const it = withModifiers((name, options, body) => nodeTest.it(name, options, body ? () => body() : undefined));
export const test = it;
export const beforeAll = (fn) => nodeTest.before(() => fn());
export const afterAll = (fn) => nodeTest.after(() => fn());
export const beforeEach = (fn) => nodeTest.beforeEach(() => fn());
export const afterEach = (fn) => nodeTest.afterEach(() => fn());
