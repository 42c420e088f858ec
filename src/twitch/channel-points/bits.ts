/**
 * Tickets from bits: EventSub `channel.bits.use` (cheers, Power-ups, combos; the broadcaster's
 * token with bits:read) handed to the engine's door, which adds tickets per N bits used during an
 * open draw, capped per viewer (giveaway/tickets.ts). Each event counts once (its message id is
 * the grant's ref; the client dedupes redeliveries too).
 *
 * Contract: bits cannot be refunded, so nothing is sent back to Twitch; an event the door refuses
 * (no draw open, not eligible) only counts for nothing and is logged. Twitch does not replay bits
 * used while the socket was down and has no list to read them back from: after a gap the line
 * says from when bits may be missing. `state` is ready, refused (the subscription was refused or
 * revoked, with `problem`) or stopped.
 */
import { z } from 'zod';
import type { Logger } from '../../logging/index.js';
import type { EventSubTopics, EventMeta } from '../eventsub/topics.js';
import { refusalCode, refusalWords, type KnownRoles } from '../../giveaway/tickets.js';
import type { EntryDoor } from './entries.js';

const BitsEvent = z.looseObject({
  user_id: z.string().min(1),
  user_login: z.string(),
  user_name: z.string().optional(),
  broadcaster_user_id: z.string(),
  bits: z.number().int().positive(),
  type: z.string().optional(),
});

export interface BitsHealth {
  state: 'ready' | 'refused' | 'stopped';
  problem?: string;
  /** Bits events counted toward tickets in this run, and the tickets they gave. */
  events: number;
  tickets: number;
}

export class BitsEntries {
  private state: BitsHealth['state'] = 'ready';
  private problem: string | undefined;
  private events = 0;
  private tickets = 0;
  private readonly log: Logger;

  constructor(
    private readonly o: {
      broadcasterId: string;
      topics: EventSubTopics;
      door: Pick<EntryDoor, 'enterByTickets'>;
      logger: Logger;
      onProblem?: (line: string) => void;
      /** The viewer's roles from Twitch's API, when a role rule is in force (roles.ts ViewerRoles). */
      roles?: (userId: string) => Promise<KnownRoles>;
    },
  ) {
    this.log = o.logger.child({ module: 'twitch.bits' });
  }

  start(): void {
    this.o.topics.register(
      {
        type: 'channel.bits.use',
        version: '1',
        condition: { broadcaster_user_id: this.o.broadcasterId },
        account: 'broadcaster',
      },
      {
        onEvent: (event, meta) => this.onBits(event, meta),
        onSubscribed: ({ gap }) => {
          if (gap && !gap.first)
            this.log.warn(
              { since: new Date(gap.since).toISOString() },
              'bits used since the EventSub socket dropped could not be counted (Twitch does not replay them)',
            );
        },
        onRefused: (p) => this.refuse(p),
        onRevoked: (status) =>
          this.refuse(`Twitch revoked the bits subscription (${status}): log the broadcaster in again with bits:read.`),
      },
    );
  }

  health(): BitsHealth {
    return {
      state: this.state,
      ...(this.problem ? { problem: this.problem } : {}),
      events: this.events,
      tickets: this.tickets,
    };
  }

  stop(): void {
    this.state = 'stopped';
  }

  private refuse(problem: string): void {
    this.state = 'refused';
    this.problem = problem;
    if (this.o.onProblem) this.o.onProblem(`bits tickets are off: ${problem}`);
    else this.log.error(`bits tickets are off: ${problem}`);
  }

  private async onBits(raw: unknown, meta: EventMeta): Promise<void> {
    if (this.state === 'stopped') return;
    const e = BitsEvent.safeParse(raw);
    if (!e.success || e.data.broadcaster_user_id !== this.o.broadcasterId) {
      this.log.warn('a bits event did not have the expected shape; ignored');
      return;
    }
    const b = e.data;
    const roles = this.o.roles ? await this.o.roles(b.user_id) : undefined;
    const outcome = await this.o.door.enterByTickets({
      source: 'bits',
      ref: meta.messageId,
      userId: b.user_id,
      login: b.user_login,
      displayName: b.user_name ?? b.user_login,
      bits: b.bits,
      at: meta.receivedAt,
      ...(roles ? { roles } : {}),
    });
    this.events++;
    if (outcome.result === 'entered') this.tickets += outcome.tickets.reduce((a, n) => a + n, 0);
    this.log.info(
      {
        userId: b.user_id,
        bits: b.bits,
        result: outcome.result,
        ...(outcome.result === 'refused' ? { reason: refusalCode(outcome) } : {}),
      },
      `bits: ${b.user_login} used ${b.bits}${outcome.result === 'refused' ? ` (no ticket: ${refusalWords(outcome)})` : ''}`,
    );
  }
}
