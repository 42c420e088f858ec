/**
 * The chat client never asks tmi.js to close a socket that is not open: a connect that failed
 * (the chat server unreachable) and a stop while not connected leave no "Cannot disconnect from
 * server. Socket is not opened" warning in the logs.
 */
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TwitchChat } from '../src/twitch/index.js';
import { LogCapture } from './support/log-capture.js';

/** A 127.0.0.1 port nothing listens on (taken from the OS, then released). */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

describe('chat client stop while not connected', () => {
  it('logs no tmi.js "Cannot disconnect" line after a failed connect and on stop', async () => {
    const logs = new LogCapture();
    const chat = new TwitchChat({
      url: `ws://127.0.0.1:${await closedPort()}`,
      channel: 'somechannel',
      username: 'somebot',
      token: 'oauth:abcdef',
      logger: pino({ level: 'trace' }, logs),
      connectTimeoutMs: 5000,
    });
    await expect(chat.connect()).rejects.toThrow(/could not connect/);
    await chat.disconnect();
    await chat.disconnect(); // a second stop, as a shutdown after a failed start-up does
    expect(chat.state).toBe('disconnected');
    expect(logs.text()).not.toMatch(/Cannot disconnect/);
  });
});
