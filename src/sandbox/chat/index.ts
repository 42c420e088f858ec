/**
 * The sandbox Twitch chat server's public surface: start it, play viewers, read the
 * transcript. Implementation lives in server.ts (and types.ts, channel.ts, irc-session.ts,
 * control.ts); this file only re-exports.
 */
export { startChatServer } from './server.js';
export type {
  ChatServer,
  ChatServerOptions,
  TranscriptEntry,
  SimViewer,
  SimViewerOptions,
  InjectExtra,
} from './server.js';
export type { PartnerViewer } from './shared-chat.js';
