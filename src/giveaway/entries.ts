/**
 * The open phase of a draw as chat sees it: `!enter`, the close timer, the reminders and the
 * batched acknowledgements of new entrants.
 *
 * Contract: `enter` adds a user once per open draw (by user id), never the channel or the bot,
 * and only when the Shared Chat rule lets the message in (shared-chat.ts: a partner channel's
 * viewer only with `sharedChat.partnerEntries`, recorded with that channel; a source-only message
 * never), with a ticket weight from the luck settings, and journals each entrant (a failed journal write
 * is logged; the entrant stays in memory); the entrant's fields go straight into the draw's
 * table (no Entrant object per entrant). The entry time is when chat read the line
 * (`msg.receivedAt`, one clock reading per socket read), or the engine clock's now for a message
 * without one. Acknowledgements are batched on one timer, never one line per entrant; reminders
 * go out at half time and near the end only while the draw is open and when they are at least
 * 5 s apart. The close timer hands the draw to the runner (`close`). Does not:
 * open draws, pick winners or persist records.
 */
import type { ChatMessage } from '../shared/chat.js';
import type { TimerHandle } from '../shared/clock.js';
import { channelOrBot, loweredIdentity, ticketWeight, type ChannelIdentity } from './eligibility.js';
import { channelIdentity, type FlowContext } from './context.js';
import { packRoles } from './entrants/index.js';
import type { DrawSession } from './session.js';
import { chatOrigin, mayEnter } from './shared-chat.js';

export class Entries {
  private ackTimer: TimerHandle | undefined;
  /** channelIdentity(chat) as of the last entrant; rebuilt when chat reports another. */
  private identity: ChannelIdentity | undefined;
  /** `identity` lower-cased (loweredIdentity), rebuilt with it. */
  private lowered: ChannelIdentity | undefined;

  constructor(
    private readonly c: FlowContext,
    /** The close timer fired for an open draw (the runner feeds the machine `close`). */
    private readonly closeDue: (s: DrawSession) => void,
  ) {}

  /** `!enter`: joins every open draw once per user id. Returns how many draws it joined. */
  enter(msg: ChatMessage): number {
    const ctx = this.c;
    if (this.c.work.isStopped() || msg.self) return 0;
    const origin = chatOrigin(msg, ctx.chat.channelId());
    if (!mayEnter(origin, ctx.settings.sharedChat)) return 0;
    const partnerChannelId = origin === 'partner' ? msg.sourceChannelId : undefined;
    const userId = msg.userId;
    // the entrant's fields, read from the message once it joins a first draw (no object per entrant)
    let login = '';
    let displayName = '';
    let weight = 0;
    let roleBits = 0;
    let subMonths = 0;
    let enteredAt = -1;
    let joined = 0;
    const active = this.c.draws.active.list();
    for (let i = 0; i < active.length; i++) {
      const s = active[i]!;
      if (s.phase !== 'open' || s.entrants.has(userId)) continue;
      if (enteredAt < 0) {
        const roles = msg.roles;
        login = msg.login.toLowerCase();
        if (channelOrBot(login, userId, roles.broadcaster, this.channelIdentity())) return 0;
        displayName = msg.displayName || msg.login;
        weight = ticketWeight(roles, ctx.settings.luck);
        roleBits = packRoles(roles);
        subMonths = roles.subMonths;
        enteredAt = msg.receivedAt ?? ctx.clock.now();
      }
      if (!s.addEntrantFields(userId, login, displayName, weight, roleBits, subMonths, enteredAt, partnerChannelId))
        continue;
      joined += 1;
      ctx.events.emit('entered', s.id, userId, s.entrants.size);
      try {
        ctx.repo.appendEntrantRow(s.id, s.entrants, s.entrants.size - 1);
      } catch (err) {
        ctx.logger.error({ drawId: s.id, userId, err }, 'could not journal an entrant (kept in memory)');
      }
    }
    if (joined) this.scheduleAck();
    if (joined && partnerChannelId !== undefined && ctx.channelDirectory?.loginOf(partnerChannelId) === undefined)
      ctx.channelDirectory?.lookUp(partnerChannelId);
    return joined;
  }

  /**
   * The channel and bot identity chat reports now, lower-cased (loweredIdentity); rebuilt only
   * when chat reports another, not once per entrant.
   */
  private channelIdentity(): ChannelIdentity {
    const chat = this.c.chat;
    const id = this.identity;
    const channelId = chat.channelId();
    if (
      id &&
      this.lowered &&
      id.channelLogin === chat.channelLogin &&
      id.botLogin === chat.botLogin &&
      id.channelId === (channelId || undefined)
    )
      return this.lowered;
    this.identity = channelIdentity(chat);
    return (this.lowered = loweredIdentity(this.identity));
  }

  /** Close timer and reminders of an open session. */
  scheduleOpen(s: DrawSession): void {
    const clock = this.c.clock;
    const now = clock.now();
    const closes = s.closesAtMs;
    s.schedule(clock, closes, () => this.closeDue(s));
    const rem = this.c.settings.reminders;
    let half: number | undefined;
    if (rem.halfTime) {
      const at = Math.round((Date.parse(s.record.openedAt) + closes) / 2);
      if (at > now && closes - at >= 5_000) {
        half = at;
        s.schedule(clock, at, () => this.remind(s));
      }
    }
    if (rem.nearEndSeconds > 0) {
      const at = closes - rem.nearEndSeconds * 1000;
      if (at > now && (half === undefined || at - half >= 5_000)) s.schedule(clock, at, () => this.remind(s));
    }
  }

  /** Reminds chat of an open draw (nothing once it closed, nothing for a quiet redraw: redraws.ts). */
  remind(s: DrawSession): void {
    if (s.phase === 'open' && !s.quiet) this.c.announce.reminder(s);
  }

  /** Cancels a pending acknowledgement (on stop). */
  cancelAck(): void {
    this.ackTimer?.cancel();
    this.ackTimer = undefined;
  }

  /** A batched acknowledgement of new entrants is due (also for entries from channel points and bits). */
  scheduleAck(): void {
    const every = this.c.settings.reminders.ackEverySeconds;
    if (every <= 0 || this.ackTimer) return;
    this.ackTimer = this.c.clock.setTimeout(() => {
      this.ackTimer = undefined;
      for (const s of this.c.draws.active.values()) {
        if (s.phase !== 'open' || s.unacknowledged === 0) continue;
        this.c.announce.acknowledged(s);
        s.unacknowledged = 0;
      }
    }, every * 1000);
  }
}
