/** TwitchChat over real sockets: a NOTICE without a msg-id tag (tmi.js passes null) must not crash the bot. */
import { afterEach, describe, expect, it } from 'vitest';
import { startPair, type Pair } from './support/twitch-e2e.js';

const open: Pair[] = [];
afterEach(async () => {
  for (const p of open.splice(0)) await p.close();
});

describe('TwitchChat NOTICE robustness', () => {
  it('survives a channel NOTICE without a msg-id tag and keeps receiving chat', async () => {
    const p = await startPair();
    open.push(p);
    const notices: unknown[] = [];
    p.chat.on('notice', (id: unknown) => notices.push(id));
    p.server.injectRaw([`:tmi.twitch.tv NOTICE #${p.server.channel} :Something happened.`]);
    p.server.inject(p.server.viewer('after_notice'), 'still here');
    await p.server.waitFor(() => p.messages.length === 1, 5000, 'message after the notice');
    expect(p.messages[0]!.text).toBe('still here');
    expect(p.chat.state).toBe('connected');
    expect(notices).toEqual(['']);
  });
});
