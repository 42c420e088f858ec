/**
 * Public entry of the local Fourthwall sandbox (tests, `npm start` sandbox mode, `npm run
 * sandbox:fourthwall`). Re-exports the server factory and the types callers need; the modules
 * behind it are internal.
 */
export { startFourthwallSandbox, type FourthwallSandbox, type FourthwallSandboxOptions } from './server.js';
export type { SandboxControl, FaultControl, WebhookFaultControl, RequestRecord, BroadcasterInfo } from './control.js';
export type { DeliveryRecord, DeliveryRetry, AttemptOutcome, WebhookFaultSpec } from './webhooks.js';
export { signBody } from './webhooks.js';
export type { FaultSpec, FaultKind, FaultRule } from './faults.js';
export type { GiftPurchaseInput } from './gifting.js';
export { DRAW_GRACE_SECONDS } from './gifting.js';
export type { RateLimit } from './rate-limit.js';
export type { ShopState } from './state.js';
export { SEED_PRODUCT_IDS, SEED_SHOP_ID } from './seed.js';
export * from './types.js';
