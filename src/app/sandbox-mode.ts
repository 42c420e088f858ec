/**
 * Sandbox mode (placeholder until the scripted demo lands): see README "Sandbox mode".
 */
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';

export interface SandboxModeOptions {
  config: Config;
  logger: Logger;
  onSignals(stop: (reason: string) => Promise<void>): void;
}

export async function runSandboxMode(options: SandboxModeOptions): Promise<number> {
  options.logger.error('sandbox mode is not implemented yet');
  return 1;
}
