import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { basic, call } from './support/sandbox-fourthwall-helpers.js';

describe('npm run sandbox:fourthwall (cli.ts)', () => {
  it('prints one JSON line with apiUrl, shopUrl and credentials, serves, and exits on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/fourthwall/cli.ts', '--port', '0'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const rl = createInterface({ input: child.stdout });
        rl.once('line', (l) => {
          rl.close();
          resolve(l);
        });
        child.once('exit', (code) => reject(new Error(`cli exited (${code}) before printing: ${stderr}`)));
      });
      const info = JSON.parse(line) as Record<string, string>;
      expect(Object.keys(info).sort()).toEqual(['apiUrl', 'password', 'shopUrl', 'username', 'webhookSecret']);
      expect(info['apiUrl']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/open-api\/v1\.0$/);
      expect(info['shopUrl']).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/shop$/);
      const shop = await call(`${info['apiUrl']}/shops/current`, {
        headers: basic({ username: info['username'] as string, password: info['password'] as string }),
      });
      expect(shop.status).toBe(200);
      expect(shop.body.id).toMatch(/^sh_/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });

  it('rejects a bad --port with a clear message and a non-zero exit', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/sandbox/fourthwall/cli.ts', '--port', 'abc'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toContain('--port must be an integer');
  });
});
