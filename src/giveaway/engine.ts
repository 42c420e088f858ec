/**
 * The parts every flow module of the giveaway engine shares: the context (ports, settings, clock,
 * logger, events), the announcer, the registry of draws in memory and the runtime (stop flag, work
 * in flight); plus three small helpers they all use.
 *
 * Contract: one Engine per GiveawayService, built by it and handed to each flow module
 * (opening.ts, entries.ts, drawing.ts, claim-window.ts, finalize.ts, settle.ts, restore.ts,
 * link-flow.ts, reroll.ts). Does not hold state of its own or decide anything about a draw.
 */
import type { Clock } from '../shared/clock.js';
import type { Announcer } from './announcer.js';
import type { EngineContext } from './context.js';
import type { ChannelIdentity } from './eligibility.js';
import type { ChatPort } from './ports.js';
import type { DrawRegistry } from './registry.js';
import type { EngineRuntime } from './runtime.js';
import type { DrawSession } from './session.js';

/** Shared parts of the engine, passed to every flow module. */
export interface Engine {
  /** Ports, settings, clock, the engine's logger and its events. */
  readonly ctx: EngineContext;
  readonly announce: Announcer;
  readonly draws: DrawRegistry;
  readonly runtime: EngineRuntime;
}

/** Saves the session's record; a failed save is logged, never thrown. */
export function persistQuietly(e: Engine, s: DrawSession): Promise<void> {
  return s.persist(e.ctx.repo).catch((err: unknown) => {
    e.ctx.logger.error({ drawId: s.id, err }, 'could not save the draw record');
  });
}

/** The clock's now as an ISO timestamp. */
export function isoNow(clock: Clock): string {
  return new Date(clock.now()).toISOString();
}

/** The channel and bot identity chat reports right now, for the always-on exclusions. */
export function channelIdentity(chat: ChatPort): ChannelIdentity {
  const channelId = chat.channelId();
  return { channelLogin: chat.channelLogin, botLogin: chat.botLogin, ...(channelId ? { channelId } : {}) };
}
