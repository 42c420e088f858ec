/**
 * undici for the Fourthwall client, loaded on its first HTTP call (see src/shared/lazy-undici.ts).
 */
export { undici, type Undici } from '../shared/lazy-undici.js';
