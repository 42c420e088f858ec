/**
 * What a start says (bot.ts): where the streamer's pages are, as soon as they answer, and the
 * start-up line once the bot runs; on the operator's console and in the log. Links only on a
 * terminal (the signed-in dashboard link is a secret).
 */
import type { GiveawayEngine } from '../giveaway/engine.js';
import type { BotHttpServerWithPages } from '../http/server.js';
import { describeClientKeys } from '../http/surfaces.js';
import { plural } from '../shared/plural.js';
import type { OperatorPages } from '../web/operator/index.js';
import type { BotContext } from './context.js';

/** The start-up line: where the bot talks and listens (the pages were announced by announcePages). */
export function announceStart(c: BotContext, p: { engine: GiveawayEngine; webhookUrl: string }): void {
  const { config, log } = c;
  const { engine, webhookUrl } = p;
  const { channel, username, ircUrl } = config.twitch;
  const fourthwall = config.fourthwall.apiUrl;
  const openDraws = engine.openDrawCount();
  const where = { mode: config.mode, channel, bot: username, chat: ircUrl, fourthwall, webhooks: webhookUrl };
  // Who the per-client limits think a client is (issue 46: the default trusts no header).
  const clients = describeClientKeys(config.http.trustProxy, config.publicUrl);
  log.info(
    { ...where, openDraws, dataDir: config.dataDir, trustProxy: config.http.trustProxy ?? 'none' },
    `giftdrop ${config.mode}: chat #${channel} as ${username} via ${ircUrl}, Fourthwall at ${fourthwall}, ` +
      `webhooks at ${webhookUrl}, ${plural(openDraws, 'open draw')}; ${clients}`,
  );
  if (config.mode === 'live') c.operator.notify(clients);
}

/**
 * Where the streamer's pages are, said once, as soon as their server answers (before chat is
 * connected: a Twitch that cannot be reached never hides them): on the operator's console
 * (stdout) and in the log. The one place that says it; the URL is the one the streamer's own
 * listener (GIFTDROP_LOCAL_PORT) listens on.
 */
export function announcePages(c: BotContext, server: BotHttpServerWithPages, pages: OperatorPages): void {
  const url = server.localUrl;
  const tokenFrom = pages.token.source === 'env' ? 'GIFTDROP_DASHBOARD_TOKEN' : pages.token.file;
  const dashboard = `dashboard at ${url}/dashboard (sign in with the token in ${tokenFrom})`;
  const line = `overlay (OBS browser source) at ${url}/overlay; ${dashboard}`;
  c.operator.notify(line);
  c.log.info({ overlay: `${url}/overlay`, dashboard: `${url}/dashboard` }, line);
  // The link that signs in by itself: its token is in the fragment (#), which the browser never
  // sends anywhere. A secret, so only on the operator's terminal, never in a log or a pipe.
  const signedIn = `${url}/dashboard#token=${encodeURIComponent(pages.token.token)}`;
  const privateLine = `dashboard, signed in: ${signedIn} (a private link: do not show it on stream)`;
  c.operator.notify(privateLine, { secret: true, terminalOnly: true });
}
