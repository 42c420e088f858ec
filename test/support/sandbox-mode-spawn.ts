/**
 * Test helpers for sandbox mode and `npm run setup`: run a real child process (a clean
 * environment, stdin closed, no terminal) and collect its output and exit code; and the
 * environment that points `npm run setup` at a local Fourthwall sandbox and chat server.
 */
import { spawn } from 'node:child_process';
import type { ChatServer } from '../../src/sandbox/chat/index.js';
import type { FourthwallSandbox } from '../../src/sandbox/fourthwall/index.js';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname;

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` in the repository with exactly `env` (plus PATH/HOME); rejects after `timeoutMs`. */
export function runProcess(command: string, args: string[], env: Record<string, string>, timeoutMs = 60_000): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_UPDATE_NOTIFIER: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** The environment of a streamer whose credentials point at the local sandboxes. */
export function setupEnv(fw: FourthwallSandbox, chat: ChatServer, dataDir: string, publicUrl: string): Record<string, string> {
  return {
    GIFTDROP_MODE: 'live',
    DATA_DIR: dataDir,
    TWITCH_CHANNEL: chat.channel,
    TWITCH_USERNAME: chat.botLogin,
    TWITCH_TOKEN: `oauth:${chat.token}`,
    TWITCH_IRC_URL: chat.url,
    FOURTHWALL_API_URL: fw.apiUrl,
    FOURTHWALL_USERNAME: fw.username,
    FOURTHWALL_PASSWORD: fw.password,
    FOURTHWALL_WEBHOOK_SECRET: fw.webhookSecret,
    GIFTDROP_PUBLIC_URL: publicUrl,
  };
}
