/**
 * EventSub's `channel.chat.message` payload as the project's ChatMessage
 * (src/twitch/eventsub-chat-message.ts): identity and text, roles from this channel's `badges`
 * only (a partner channel's `source_badges` grant nothing), Shared Chat's source channel carried
 * for the rule, cheers, the bot's own messages, and events that do not fit refused with a reason.
 */
import { describe, expect, it } from 'vitest';
import { chatMessageOfEvent } from '../src/twitch/eventsub-chat-message.js';
import { chatOrigin } from '../src/giveaway/shared-chat.js';

const HERE = '111111111';
const BOT = '222222222';
const PARTNER = '333333333';
const ctx = { channelId: HERE, botUserId: BOT };

/** A payload shaped like Twitch's example of channel.chat.message (v1). */
function event(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    broadcaster_user_id: HERE,
    broadcaster_user_login: 'home_chan',
    broadcaster_user_name: 'Home_Chan',
    chatter_user_id: '444444444',
    chatter_user_login: 'viewer_one',
    chatter_user_name: 'Viewer_One',
    message_id: 'cc106a89-1814-919d-454c-f4f2f970aae7',
    message: {
      text: '!enter',
      fragments: [{ type: 'text', text: '!enter', cheermote: null, emote: null, mention: null }],
    },
    color: '#00FF7F',
    badges: [],
    message_type: 'text',
    cheer: null,
    reply: null,
    channel_points_custom_reward_id: null,
    source_broadcaster_user_id: null,
    source_broadcaster_user_login: null,
    source_broadcaster_user_name: null,
    source_message_id: null,
    source_badges: null,
    ...over,
  };
}

describe('channel.chat.message as a ChatMessage', () => {
  it('takes identity, text and the send time of the notification', () => {
    const m = chatMessageOfEvent(event(), ctx, 5000, '2026-11-28T10:00:00.000Z');
    expect(m).toMatchObject({
      id: 'cc106a89-1814-919d-454c-f4f2f970aae7',
      channel: 'home_chan',
      channelId: HERE,
      userId: '444444444',
      login: 'viewer_one',
      displayName: 'Viewer_One',
      text: '!enter',
      bits: 0,
      action: false,
      sentAt: Date.parse('2026-11-28T10:00:00.000Z'),
      receivedAt: 5000,
      self: false,
    });
    expect(m).not.toHaveProperty('sourceChannelId');
    expect((chatMessageOfEvent(event(), ctx, 5000) as { sentAt: number }).sentAt).toBe(5000);
  });

  it("reads roles from this channel's badges (months from the subscriber badge's info), never from source_badges", () => {
    const badges = [
      { set_id: 'moderator', id: '1', info: '' },
      { set_id: 'subscriber', id: '12', info: '16' },
      { set_id: 'vip', id: '1', info: '' },
    ];
    expect((chatMessageOfEvent(event({ badges }), ctx, 1) as { roles: unknown }).roles).toEqual({
      broadcaster: false,
      moderator: true,
      vip: true,
      subscriber: true,
      subMonths: 16,
      firstMessage: false,
    });
    expect(
      (
        chatMessageOfEvent(event({ badges: [{ set_id: 'founder', id: '0', info: '3' }] }), ctx, 1) as {
          roles: { subscriber: boolean; subMonths: number };
        }
      ).roles,
    ).toMatchObject({ subscriber: true, subMonths: 3 });
    // the broadcaster by id, or by badge; a first-time chatter's introduction
    expect(
      (chatMessageOfEvent(event({ chatter_user_id: HERE }), ctx, 1) as { roles: { broadcaster: boolean } }).roles
        .broadcaster,
    ).toBe(true);
    expect(
      (chatMessageOfEvent(event({ message_type: 'user_intro' }), ctx, 1) as { roles: { firstMessage: boolean } }).roles
        .firstMessage,
    ).toBe(true);
    // a partner channel's broadcaster and moderator, typing in their channel during Shared Chat: a viewer here
    const partner = chatMessageOfEvent(
      event({
        chatter_user_id: PARTNER,
        badges: [],
        source_broadcaster_user_id: PARTNER,
        source_broadcaster_user_login: 'partner_chan',
        source_message_id: 'abc',
        source_badges: [
          { set_id: 'broadcaster', id: '1', info: '' },
          { set_id: 'moderator', id: '1', info: '' },
        ],
        is_source_only: false,
      }),
      ctx,
      1,
    );
    expect(partner).toMatchObject({
      sourceChannelId: PARTNER,
      sourceOnly: false,
      roles: { broadcaster: false, moderator: false },
    });
    expect(chatOrigin(partner as never)).toBe('partner');
  });

  it('carries Shared Chat: own messages during a session are own, source-only ones are ignored by the rule', () => {
    const own = chatMessageOfEvent(
      event({ source_broadcaster_user_id: HERE, source_message_id: 'x', source_badges: [], is_source_only: false }),
      ctx,
      1,
    );
    expect(chatOrigin(own as never)).toBe('own');
    const only = chatMessageOfEvent(event({ source_broadcaster_user_id: HERE, is_source_only: true }), ctx, 1);
    expect(chatOrigin(only as never)).toBe('source-only');
  });

  it("takes a cheer's bits and marks the bot's own messages", () => {
    expect((chatMessageOfEvent(event({ cheer: { bits: 250 } }), ctx, 1) as { bits: number }).bits).toBe(250);
    expect(
      (
        chatMessageOfEvent(event({ chatter_user_id: BOT, chatter_user_login: 'giftdrop_bot' }), ctx, 1) as {
          self: boolean;
        }
      ).self,
    ).toBe(true);
  });

  it('refuses what does not fit, with a reason (never throws)', () => {
    expect(chatMessageOfEvent(undefined, ctx, 1)).toMatch(/not a channel\.chat\.message event/);
    expect(chatMessageOfEvent(event({ chatter_user_id: '' }), ctx, 1)).toMatch(/chatter_user_id/);
    expect(chatMessageOfEvent(event({ message: { fragments: [] } }), ctx, 1)).toMatch(/message/);
    expect(chatMessageOfEvent(event({ broadcaster_user_id: '999' }), ctx, 1)).toBe('an event of another channel (999)');
  });
});
