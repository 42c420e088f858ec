/**
 * The moderator side of link giveaways: `!giveaway start` (checks, product look-up, opening),
 * `!giveaway cancel`, and `!giveaway retry` (delivering the links of the latest purchase or link
 * giveaway whose links failed).
 *
 * Contract: at most one link giveaway runs at a time; a second start while one is open or still
 * being looked up is refused (the guard is set synchronously before the first await). Winners and
 * seconds are checked against the link settings before the shop is asked. Cancel works only while
 * no links are being created (phases `open` and `claim`) and creates none. Retry reuses the kept
 * winners and only creates links for those without one. Every refusal is a reply for chat
 * (`ActionResult`), never an exception. Does not: create links itself (finalize.ts,
 * link-giveaway.ts) or check who may run the commands (commands/ does).
 */
import type { ChatMessage } from '../shared/chat.js';
import { snapshot } from './context.js';
import { isoNow, persistQuietly, type Engine } from './engine.js';
import type { Finalizer } from './finalize.js';
import { resolveProduct } from './link-giveaway.js';
import { render } from './messages.js';
import type { Opener } from './opening.js';
import type { DrawRecord } from './ports.js';

/** Result of a moderator action; `message` is the reply to give when it did not happen. */
export type ActionResult = { ok: true; id?: string } | { ok: false; message: string };

export class LinkFlow {
  private starting = false;

  constructor(
    private readonly e: Engine,
    private readonly opener: Opener,
    private readonly finalizer: Finalizer,
  ) {}

  /** `!giveaway start`: a link giveaway of the product `query` names (id, slug or name). */
  async start(by: ChatMessage, query: string, winners?: number, seconds?: number): Promise<ActionResult> {
    const { ctx, draws, runtime } = this.e;
    const links = ctx.settings.links;
    const running = draws.activeSessions().find((s) => s.record.kind === 'link-giveaway');
    if (running || this.starting) {
      return { ok: false, message: `A link giveaway is already running${running ? ` (${running.record.offer.name})` : ''}.` };
    }
    const count = winners ?? links.defaultWinners;
    const secs = seconds ?? links.defaultSeconds;
    if (!Number.isInteger(count) || count < 1 || count > links.maxWinners) {
      return { ok: false, message: `Winners must be a whole number from 1 to ${links.maxWinners}.` };
    }
    if (!Number.isInteger(secs) || secs < 5 || secs > links.maxSeconds) {
      return { ok: false, message: `Seconds must be a whole number from 5 to ${links.maxSeconds}.` };
    }
    if (!query.trim()) return { ok: false, message: 'Say which product: a product id, slug or name.' };
    this.starting = true;
    try {
      const match = await runtime.track(resolveProduct(ctx.shop, query));
      if (!match.ok) {
        const q = query.trim();
        if (match.reason === 'ambiguous') {
          const names = match.candidates.map((p) => `${p.name} (${p.slug})`).join(', ');
          return { ok: false, message: render('Several products match "{q}": {names}. Use the slug.', { q, names }) };
        }
        if (match.reason === 'unavailable') {
          return { ok: false, message: 'The shop could not be reached to look the product up; try again.' };
        }
        return { ok: false, message: render('No product matches "{q}".', { q }) };
      }
      const product = match.product;
      const id = `lnk_${ctx.random.bytes(8).toString('hex')}`;
      // A failed save was logged and told to the operator; the reply below says it did not open.
      await this.opener
        .open(id, { windowMs: secs * 1000 }, () => ({
          kind: 'link-giveaway',
          source: {},
          offer: { id: product.id, name: product.name },
          gifts: count,
          startedBy: { userId: by.userId, login: by.login },
        }))
        .catch(() => undefined);
      return draws.active.has(id) ? { ok: true, id } : { ok: false, message: 'The giveaway could not be opened.' };
    } finally {
      this.starting = false;
    }
  }

  /** `!giveaway cancel`: cancels the open link giveaway (no links are created for it). */
  async cancel(): Promise<ActionResult> {
    const { ctx, draws, runtime } = this.e;
    const s = draws.activeSessions().find((x) => x.record.kind === 'link-giveaway');
    if (!s) return { ok: false, message: 'No link giveaway is open.' };
    if (s.phase !== 'open' && s.phase !== 'claim') {
      return { ok: false, message: 'Too late to cancel: the links are being created.' };
    }
    s.phase = 'done';
    s.clearTimers();
    const r = s.record;
    r.status = 'cancelled';
    r.closedAt = isoNow(ctx.clock);
    s.reveal();
    draws.retire(s);
    ctx.logger.info({ drawId: s.id }, 'link giveaway cancelled');
    this.e.announce.say('cancelled', { product: r.offer.name }, 'normal');
    ctx.events.emit('draw-cancelled', snapshot(r));
    await runtime.track(persistQuietly(this.e, s));
    return { ok: true, id: s.id };
  }

  /** `!giveaway retry`: delivers the links of the latest giveaway whose links failed. */
  async retry(): Promise<ActionResult> {
    const { draws, runtime } = this.e;
    const s = await runtime.track(draws.findUndelivered());
    if (!s) return { ok: false, message: 'No giveaway is waiting for links.' };
    if (s.phase !== 'done') return { ok: false, message: 'The links are being created right now.' };
    const r: DrawRecord = s.record;
    s.phase = 'finalizing';
    r.status = 'drawing';
    delete r.failure;
    draws.unretire(s);
    await runtime.track(this.finalizer.finalize(s));
    const after: DrawRecord['status'] = s.record.status;
    return after === 'finished' ? { ok: true, id: s.id } : { ok: false, message: 'The links could not be created yet.' };
  }
}
