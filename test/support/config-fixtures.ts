/**
 * Config test fixtures: a complete set of live credentials (fake values a test can search the
 * output for: none may ever be printed), and the problems a ConfigError lists.
 */
import { expect } from 'vitest';
import { ConfigError } from '../../src/config/index.js';

export const LIVE_ENV = {
  TWITCH_CHANNEL: 'somestreamer',
  TWITCH_USERNAME: 'giftdrop_bot',
  TWITCH_TOKEN: 'oauth:tok-very-secret-123',
  FOURTHWALL_USERNAME: 'api-user',
  FOURTHWALL_PASSWORD: 'pw-very-secret-456',
  FOURTHWALL_WEBHOOK_SECRET: 'whsec-very-secret-789',
};

/** The problems of the ConfigError `fn` throws (it must throw one). */
export function configProblems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}
