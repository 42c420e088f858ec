/**
 * TEST-ONLY shim for the Windows job of .ci/run, never part of the product: preloaded with
 * `--require` (NODE_OPTIONS) into Node's Windows build running under Debian's Wine 8: the clone's
 * node.exe and the single executable alike (a single executable runs `--require` preloads, not
 * `--import` ones; hence CommonJS).
 *
 * Wine 8 bug: `socket.setKeepAlive(true, ms)` on a TCP socket that is still connecting fails with
 * UV_UNKNOWN there (Windows itself accepts it), and undici calls it right after `connect()`, so
 * every HTTP request would fail with "UNKNOWN". This defers the call to the socket's `connect`
 * event, when Wine accepts it; on a connected socket it is the call as it was.
 */
'use strict';
const net = require('node:net');

const setKeepAlive = net.Socket.prototype.setKeepAlive;
net.Socket.prototype.setKeepAlive = function deferredSetKeepAlive(...args) {
  if (this.connecting) {
    this.once('connect', () => setKeepAlive.apply(this, args));
    return this;
  }
  return setKeepAlive.apply(this, args);
};
