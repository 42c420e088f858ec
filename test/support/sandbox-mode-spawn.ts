/**
 * Test helpers for sandbox mode and `npm run setup`: run a real child process (a clean
 * environment, stdin closed, no terminal) and collect its output and exit code; and the
 * environment that points `npm run setup` at a local Fourthwall sandbox and chat server; and
 * sandbox mode run in the test's own process, its transcript collected (demoInProcess).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import type { Config } from '../../src/config/index.js';
import { runSandboxMode, type SandboxModeOptions } from '../../src/local/sandbox-mode.js';
import { silentLogger } from '../../src/logging/index.js';
import type { ChatServer } from '../../src/sandbox/chat/index.js';
import type { FourthwallSandbox } from '../../src/sandbox/fourthwall/index.js';
import { followText } from './output-wait.js';

export const REPO_ROOT = new URL('../..', import.meta.url).pathname;

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `command args` in `cwd` (default: the repository) with exactly `env` (plus PATH/HOME); rejects after `timeoutMs`. */
export function runProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
  cwd = REPO_ROOT,
): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_UPDATE_NOTIFIER: '1', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `${command} ${args.join(' ')} did not finish within ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        ),
      );
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
export function setupEnv(
  fw: FourthwallSandbox,
  chat: ChatServer,
  dataDir: string,
  publicUrl: string,
): Record<string, string> {
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

/** A running child process whose output can be waited on. */
export interface LiveProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves once stdout matches `re`; rejects after `timeoutMs` with the output so far. */
  until(re: RegExp, what: string, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
  /** How the process itself ended: its exit code, or the signal that ended it. */
  ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `command args` in the repository with `env` (plus PATH/HOME), stdin closed. */
export function startProcess(command: string, args: string[], env: Record<string, string>): LiveProcess {
  const child = spawn(command, args, {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = followText(child.stdout);
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: out.text,
    stderr: () => err,
    exited,
    ended,
    until: (re, what, timeoutMs = 30_000) =>
      out.until(
        (text) => re.test(text),
        timeoutMs,
        (text) => new Error(`timed out waiting for ${what}; stdout so far:\n${text}\nstderr:\n${err}`),
      ),
  };
}

/** Sandbox mode run in this process (runSandboxMode), its transcript collected as text. */
export interface DemoInProcess {
  /** The lines typed at the prompt. */
  input: PassThrough;
  /** runSandboxMode's result. */
  done: Promise<number | 'go-live'>;
  /** The transcript so far. */
  out(): string;
  /** Resolves once the transcript matches `re`; rejects naming `what` (with the transcript) after `ms`, or once the demo ended without it. */
  seen(re: RegExp, what: string, ms?: number): Promise<void>;
}

/** Starts sandbox mode in this process on `config`: interactive, no colour, no terminal; `options` adds or overrides. */
export function demoInProcess(config: Config, options: Partial<SandboxModeOptions> = {}): DemoInProcess {
  let text = '';
  let ended: string | undefined;
  const listeners = new Set<() => void>();
  const output = Object.assign(
    new Writable({
      write(chunk, _enc, cb) {
        text += String(chunk);
        for (const l of listeners) l();
        cb();
      },
    }),
    { isTTY: false },
  );
  const input = new PassThrough();
  const done = runSandboxMode({
    config,
    logger: silentLogger(),
    onSignals: () => undefined,
    output,
    input,
    interactive: true,
    colour: false,
    ...options,
  });
  void done.then(
    (code) => (ended = `exit code ${String(code)}`),
    (err: unknown) => (ended = err instanceof Error ? err.message : 'a rejection'),
  );
  const seen = (re: RegExp, what: string, ms = 30_000) =>
    new Promise<void>((resolve, reject) => {
      const stop = (err?: Error) => {
        clearTimeout(timer);
        clearInterval(endWatch);
        listeners.delete(check);
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (re.test(text)) stop();
      };
      const timer = setTimeout(() => stop(new Error(`timed out waiting for ${what}; output:\n${text}`)), ms);
      const endWatch = setInterval(() => {
        if (ended !== undefined && !re.test(text))
          stop(new Error(`the demo ended (${ended}) before ${what}; output:\n${text}`));
      }, 50);
      listeners.add(check);
      check();
    });
  return { input, done, out: () => text, seen };
}
