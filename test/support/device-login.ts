/**
 * A Twitch device-code login against the chat sandbox, answered on its verification page as the
 * user would, and saved in a LoginStore exactly as the setup page saves it (setup-service.ts
 * finishLogin). Shared by the tests of bots that run on the page's saved logins.
 */
import type { ChatServer } from '../../src/sandbox/chat/index.js';
import { systemClock } from '../../src/shared/clock.js';
import { TwitchAuthClient } from '../../src/twitch/auth.js';
import { startDeviceLogin, type DeviceLoginResult } from '../../src/twitch/device-login.js';
import type { LoginStore, TwitchRole } from '../../src/twitch/login-store.js';

/** Logs `login` in with the Public application `clientId` and `scopes`, saves it for `role`; resolves with Twitch's answer. */
export async function saveDeviceLogin(
  chat: ChatServer,
  store: LoginStore,
  o: { role: TwitchRole; login: string; clientId: string; scopes: readonly string[] },
): Promise<DeviceLoginResult> {
  const auth = new TwitchAuthClient({ authUrl: chat.authUrl });
  try {
    const started = await startDeviceLogin({ auth, clock: systemClock, clientId: o.clientId, scopes: o.scopes });
    if (!chat.deviceLogin.answer(started.userCode, o.login, 'authorize'))
      throw new Error(`the sandbox did not take the code ${started.userCode}`);
    const r = await started.wait(AbortSignal.timeout(20_000));
    await store.save(o.role, {
      login: r.info.login,
      userId: r.info.userId,
      clientId: o.clientId,
      scopes: r.info.scopes,
      accessToken: r.tokens.accessToken,
      refreshToken: r.tokens.refreshToken,
      expiresAt: r.expiresAt,
      savedAt: new Date().toISOString(),
    });
    return r;
  } finally {
    await auth.close();
  }
}
