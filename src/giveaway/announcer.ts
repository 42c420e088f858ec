/**
 * What the engine tells chat and the operator console about a draw: openings, reminders,
 * batched entry acknowledgements, claim prompts, winners, rerolls, the seed reveal, and the
 * private delivery of links.
 *
 * Contract: lines are rendered from the configured templates; winners and failures go out at high
 * priority, announcements at normal, reminders and acknowledgements at low priority with a stale
 * limit. What a supporter typed (their name, their message) passes the link scrubber
 * (src/shared/plain-text.ts) in every line. Links reach chat only when `links.publicInChat`; they always reach the operator console
 * (marked secret). Does not: decide when to speak, change draw state, or log.
 */
import { fairCode } from '../fairness/index.js';
import type { Clock } from '../shared/clock.js';
import { linkFreeText } from '../shared/plain-text.js';
import { mentionList, render, secondsLeft, type TemplateValues } from './messages.js';
import type { DrawRecord, Winner } from './model.js';
import type { ChatPort, OperatorPort, PrivateDelivery, SayPriority } from './ports.js';
import type { DrawSession } from './session.js';
import type { GiveawaySettings } from './settings.js';

/**
 * The supporter's name as chat says it: what they typed at Fourthwall, never as a link (the bot is
 * a moderator, so Twitch's link filter would let it through). Shared with settle.ts.
 */
export function gifterOf(r: DrawRecord): string {
  return linkFreeText(r.supporter?.username ?? '', 40, ' ') || 'Someone';
}

/** The supporter's message, link-free (undefined when there is none). */
function messageOf(r: DrawRecord): string | undefined {
  return r.supporter?.message ? linkFreeText(r.supporter.message, 200, ' ') || undefined : undefined;
}

/** `@login`, with the display name when it is more than the login's capitals (`@jp_fan (ジェイピー)`). */
function who(w: Winner): string {
  return w.displayName && w.displayName.toLowerCase() !== w.login.toLowerCase()
    ? `@${w.login} (${w.displayName})`
    : `@${w.login}`;
}

/** Low-priority lines older than this are dropped by the outbox. */
const STALE_MS = 5_000;

export class Announcer {
  constructor(
    private readonly chat: ChatPort,
    private readonly operator: OperatorPort,
    private readonly settings: GiveawaySettings,
    private readonly clock: Clock,
    /** How a viewer checks a draw (the closing line names it). */
    private readonly checkHint?: (id: string) => string | undefined,
    /** How private links reach the winners now (claim page, whispers); default: the streamer sends them. */
    private readonly privateDelivery?: () => PrivateDelivery,
  ) {}

  /** Renders a template and queues it in chat. */
  say(key: keyof GiveawaySettings['messages'], values: TemplateValues, priority: SayPriority): void {
    const line = render(this.settings.messages[key], values);
    if (!line) return;
    this.chat.say(line, priority === 'low' ? { priority, staleAfterMs: STALE_MS } : { priority });
  }

  opened(s: DrawSession): void {
    const r = s.record;
    const key =
      r.kind === 'gift-draw'
        ? r.source.redo
          ? 'redrawOpened'
          : 'drawOpened'
        : r.kind === 'gift-purchase'
          ? 'purchaseOpened'
          : 'linkOpened';
    this.say(
      key,
      {
        gifter: gifterOf(r),
        count: r.gifts,
        product: r.offer.name,
        enter: this.settings.commands.enter,
        seconds: secondsLeft(this.clock.now(), s.closesAtMs),
        code: fairCode(r.fairness.commitment),
        commitment: r.fairness.commitment,
        id: r.id,
        by: r.startedBy?.login,
        message: messageOf(r),
      },
      'normal',
    );
  }

  reminder(s: DrawSession): void {
    this.say(
      'reminder',
      {
        product: s.record.offer.name,
        seconds: secondsLeft(this.clock.now(), s.closesAtMs),
        entrants: s.entrants.size,
        enter: this.settings.commands.enter,
        count: s.record.gifts,
      },
      'low',
    );
  }

  acknowledged(s: DrawSession): void {
    this.say('entered', { product: s.record.offer.name, new: s.unacknowledged, entrants: s.entrants.size }, 'low');
  }

  claimPrompt(s: DrawSession, asked: readonly Winner[], deadlineMs: number): void {
    this.say(
      'claimPrompt',
      {
        winners: mentionList(asked.map((w) => w.login)),
        claim: this.settings.commands.claim,
        seconds: secondsLeft(this.clock.now(), deadlineMs),
        product: s.record.offer.name,
      },
      'high',
    );
  }

  /** The one status line of an open draw or a draw waiting on claims (undefined otherwise). */
  statusLine(s: DrawSession): string | undefined {
    const product = s.record.offer.name;
    const now = this.clock.now();
    if (s.phase === 'open') {
      return render(this.settings.messages.statusOpen, {
        product,
        count: s.record.gifts,
        seconds: secondsLeft(now, s.closesAtMs),
        entrants: s.entrants.size,
        enter: this.settings.commands.enter,
      });
    }
    if (s.phase === 'claim-window' && s.record.claim) {
      const pending = s.record.winners.filter((w) => w.claimed === false).map((w) => w.login);
      return render(this.settings.messages.statusClaim, {
        product,
        winners: mentionList(pending),
        claim: this.settings.commands.claim,
        seconds: secondsLeft(now, Date.parse(s.record.claim.deadline)),
      });
    }
    return undefined;
  }

  /** Winners line (links only when public), then the draw's one fairness line: where to check it. */
  winners(s: DrawSession): void {
    const r = s.record;
    const pub = this.settings.links.publicInChat && r.winners.some((w) => w.redeemUrl);
    const delivery = pub
      ? render(this.settings.messages.deliveryPublic, {
          links: r.winners
            .filter((w) => w.redeemUrl)
            .map((w) => `@${w.login}: ${w.redeemUrl}`)
            .join(', '),
        })
      : this.privateLine();
    this.say(
      'winners',
      {
        product: r.offer.name,
        gifter: gifterOf(r),
        winners: mentionList(r.winners.map((w) => w.login)),
        delivery,
      },
      'high',
    );
    if (r.fairness.seed) {
      // A viewer has no command to run: without a public page, the streamer hands the draw's page out.
      const check = this.checkHint?.(r.id) ?? 'ask the streamer for its verify page';
      this.say(
        'revealed',
        {
          id: r.id,
          product: r.offer.name,
          check,
          seed: r.fairness.seed,
          commitment: r.fairness.commitment,
          code: fairCode(r.fairness.commitment),
        },
        'normal',
      );
    }
  }

  /** The winners line's tail when links stay private: who delivers them, and where the claim page is. */
  private privateLine(): string {
    const how = this.privateDelivery?.() ?? { via: 'streamer' };
    const key = how.via === 'whisper' ? 'deliveryWhispered' : how.via === 'claim' ? 'deliveryClaim' : 'deliveryPrivate';
    return render(this.settings.messages[key], { claimUrl: how.claimUrl });
  }

  rerolled(s: DrawSession, old: Winner, winner: Winner, reason: string): void {
    this.say(
      'rerolled',
      { old: `@${old.login}`, winner: `@${winner.login}`, product: s.record.offer.name, reason },
      'high',
    );
    if (winner.redeemUrl && this.settings.links.publicInChat) {
      this.chat.say(render(this.settings.messages.deliveryPublic, { links: `@${winner.login}: ${winner.redeemUrl}` }), {
        priority: 'high',
      });
    }
  }

  /** Private delivery: every link to the operator console (the history has them too). */
  deliverLinks(s: DrawSession, winners: readonly Winner[]): void {
    for (const w of winners) {
      if (!w.redeemUrl) continue;
      this.operator.notify(`[${s.record.offer.name}] link for ${who(w)}: ${w.redeemUrl}`, {
        secret: true,
        drawId: s.record.id,
      });
    }
  }
}
