/**
 * Public API of the Fourthwall adapter: the typed client, its operations table, wire schemas and
 * types, the error family, the rate limiter, credentials and webhook verification / parsing.
 * Other modules import from here, never from the files behind it.
 */
export * from './client.js';
export * from './operations.js';
export * from './schemas.js';
export * from './errors.js';
export * from './rate-limit.js';
export * from './auth.js';
export * from './webhooks.js';
export * from './feed.js';
