/**
 * The sandbox EventSub (Twitch's EventSub over WebSocket, local): the WebSocket server
 * (./server.ts) and its Helix subscription routes (./subscriptions.ts). Start the server, then
 * register the routes on the Helix sandbox the bot calls.
 */
export { EventSubSandbox, startEventSubSandbox } from './server.js';
export { registerEventSubRoutes } from './subscriptions.js';
