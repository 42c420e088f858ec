/**
 * The package scripts a streamer runs work in every shell npm may use: sh on Linux and macOS,
 * cmd.exe on Windows (which npm runs scripts with, whether typed in PowerShell or cmd). So none
 * uses `exec` (cmd.exe has none), a `VAR=value command` prefix (sh only), single quotes (cmd.exe
 * passes them through) or sh operators; each is one `node scripts/run.mjs <entry>` command.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};
const USER_FACING = ['start', 'setup', 'history', 'verify', 'sandbox:fourthwall', 'sandbox:chat'];

describe('package scripts', () => {
  it.each(USER_FACING)('%s is one plain node command every shell runs the same', (name) => {
    const script = pkg.scripts[name];
    expect(script).toMatch(/^node scripts\/run\.mjs [\w/-]+$/);
  });

  it('no script uses exec, an environment prefix or single quotes', () => {
    for (const [name, script] of Object.entries(pkg.scripts)) {
      expect(script, name).not.toMatch(/\bexec\b|^\s*[A-Z_]+=\S|'/);
    }
  });
});
