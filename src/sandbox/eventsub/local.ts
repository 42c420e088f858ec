/**
 * Twitch beyond chat for a local stack (sandbox mode, end-to-end tests, benches): the sandbox
 * EventSub server with its subscription routes, channel points on the Helix sandbox, and the
 * channel's subscribers and moderators as Get Broadcaster Subscriptions and Get Moderators tell
 * them, and the broadcaster's login (user = the channel, scopes channel:manage:redemptions,
 * bits:read, channel:read:subscriptions and moderation:read), its
 * token answered by the chat server's `/oauth2` too. A redemption is published on EventSub as
 * Twitch does; `useBits` publishes a `channel.bits.use` event.
 */
import type { ChatServer } from '../chat/index.js';
import type { SandboxAccount, SandboxAccounts } from '../helix/accounts.js';
import { SandboxChannelPoints } from '../helix/channel-points.js';
import { SandboxChannelRoles } from '../helix/channel-roles.js';
import type { SandboxHelix } from '../helix/index.js';
import type { Clock } from '../../shared/clock.js';
import { registerEventSubRoutes } from './subscriptions.js';
import { startEventSubSandbox, type EventSubSandbox } from './server.js';

export interface LocalTwitchEvents {
  eventSub: EventSubSandbox;
  channelPoints: SandboxChannelPoints;
  /** The channel's subscribers and moderators as Twitch's API tells the broadcaster (Get Broadcaster Subscriptions, Get Moderators). */
  roles: SandboxChannelRoles;
  /** The broadcaster's login (its token is TWITCH_BROADCASTER_TOKEN for the bot). */
  broadcaster: SandboxAccount;
  /** A viewer uses bits in the channel (a `channel.bits.use` event; sessions it reached). */
  useBits(viewer: { id: string; login: string }, bits: number): number;
  close(): Promise<void>;
}

const BROADCASTER_SCOPES = [
  'channel:manage:redemptions',
  'channel:read:redemptions',
  'bits:read',
  'channel:read:subscriptions',
  'moderation:read',
] as const;

export async function startLocalTwitchEvents(o: {
  chat: ChatServer;
  helix: SandboxHelix;
  accounts: SandboxAccounts;
  clock: Clock;
}): Promise<LocalTwitchEvents> {
  const { chat, helix } = o;
  chat.tokens.accounts = o.accounts;
  const eventSub = await startEventSubSandbox({ clock: o.clock });
  registerEventSubRoutes(helix, eventSub);
  const channelPoints = new SandboxChannelPoints(helix);
  channelPoints.register();
  channelPoints.setBroadcaster(chat.channelId, chat.channel);
  const roles = new SandboxChannelRoles();
  helix.route(roles.route);
  channelPoints.onRedeemed((r) => {
    if (r.status === 'UNFULFILLED')
      eventSub.publish('channel.channel_points_custom_reward_redemption.add', channelPoints.eventOf(r));
  });
  const broadcaster = o.accounts.add({ userId: chat.channelId, login: chat.channel, scopes: BROADCASTER_SCOPES });
  return {
    eventSub,
    channelPoints,
    roles,
    broadcaster,
    useBits: (viewer, bits) =>
      eventSub.publish('channel.bits.use', {
        broadcaster_user_id: chat.channelId,
        broadcaster_user_login: chat.channel,
        broadcaster_user_name: chat.channel,
        user_id: viewer.id,
        user_login: viewer.login,
        user_name: viewer.login,
        bits,
        type: 'cheer',
        message: { text: `Cheer${bits}`, fragments: [] },
        power_up: null,
      }),
    close: () => eventSub.close(),
  };
}
