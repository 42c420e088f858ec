/**
 * What the Twitch API shows in the sandbox demo: the broadcaster is already live on the local
 * Helix API when the bot starts, so auto streaming (`streaming.auto`) sets Fourthwall's status at
 * once with the stream's thumbnail; and a followers-only rule, with one demo viewer (lurker_leo)
 * who never followed: when a draw picks them, the pick is set aside and the next one drawn
 * (announced in chat, recorded with the draw).
 * And channel points: the bot creates its reward on the local Twitch (the broadcaster's login is
 * the sandbox's), and the script shows a redemption entering and a second one refunded.
 * The demo turns these on whatever the settings file says (they need the local Twitch API).
 */
import type { Config } from '../../config/index.js';
import type { LocalStackOptions } from '../local-stack.js';

/** The demo viewer who enters every draw without following the channel. */
const DEMO_NON_FOLLOWER = 'lurker_leo';

export function withDemoTwitch(config: Config): Config {
  const s = config.settings;
  return {
    ...config,
    settings: {
      ...s,
      streaming: { ...s.streaming, auto: true },
      eligibility: { ...s.eligibility, followersOnly: true },
      channelPoints: { ...s.channelPoints, enabled: true, maxPerViewer: 1 },
    },
  };
}

/** The local Helix API for the demo: everyone follows but one, and the stream is live. */
export const demoHelix: NonNullable<LocalStackOptions['helix']> = {
  everyoneFollows: true,
  prepare(helix, chat) {
    helix.setFollow(chat.channelId, chat.viewer(DEMO_NON_FOLLOWER).userId, null);
    helix.goLive(chat.channelId, chat.channel, 'giftdrop sandbox stream: merch for chat');
  },
};
