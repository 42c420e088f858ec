/**
 * The engine's active draws (registry.ts ActiveSessions): `list()` is the Map's sessions in
 * insertion order after every kind of change (set, replace, delete, clear), and the same array
 * while nothing changed (the `!enter` path walks it on every chat line); `inClaim()` follows the
 * phases of the sessions while they are active.
 */
import { describe, expect, it } from 'vitest';
import { ActiveSessions } from '../src/giveaway/registry.js';
import { DrawSession } from '../src/giveaway/session.js';
import { sandboxRecord } from './support/beacon-vectors.js';

const session = (id: string) => new DrawSession(sandboxRecord({ id, entrants: 3, winners: 1 }), Buffer.alloc(32, 7));

describe('active sessions', () => {
  it('lists the sessions as the Map holds them after each change, and reuses the list between changes', () => {
    const active = new ActiveSessions();
    expect(active.list()).toEqual([]);
    const [a, b, c] = [session('draw-a'), session('draw-b'), session('draw-c')];
    active.set(a.id, a).set(b.id, b);
    const first = active.list();
    expect(first).toEqual([a, b]);
    expect(active.list()).toBe(first);
    active.set(c.id, c);
    expect(active.list()).toEqual([a, b, c]);
    const replaced = session('draw-a');
    active.set(replaced.id, replaced);
    expect(active.list()).toEqual([replaced, b, c]);
    expect(active.delete('draw-b')).toBe(true);
    expect(active.list()).toEqual([replaced, c]);
    expect(active.delete('draw-b')).toBe(false);
    expect(active.list()).toEqual([...active.values()]);
    active.clear();
    expect(active.list()).toEqual([]);
    expect(active.size).toBe(0);
  });

  it('counts the active sessions in their claim window through every phase change, replacement and removal', () => {
    const active = new ActiveSessions();
    const [a, b, c] = [session('draw-a'), session('draw-b'), session('draw-c')];
    active.set(a.id, a).set(b.id, b);
    expect(active.inClaim()).toBe(0);
    a.phase = 'picking';
    a.phase = 'claim-window';
    expect(active.inClaim()).toBe(1);
    a.phase = 'claim-window';
    expect(active.inClaim()).toBe(1);
    b.phase = 'claim-window';
    expect(active.inClaim()).toBe(2);
    b.phase = 'finishing';
    expect(active.inClaim()).toBe(1);
    // a session already in its claim window when it becomes active (restore) counts at once
    c.phase = 'claim-window';
    active.set(c.id, c);
    expect(active.inClaim()).toBe(2);
    // replacing a claiming session with one that is not
    const replaced = session('draw-c');
    active.set(replaced.id, replaced);
    expect(active.inClaim()).toBe(1);
    c.phase = 'settled'; // no longer active: not counted either way
    expect(active.inClaim()).toBe(1);
    active.delete('draw-a');
    expect(active.inClaim()).toBe(0);
    a.phase = 'settled';
    a.phase = 'claim-window';
    expect(active.inClaim()).toBe(0);
    b.phase = 'claim-window';
    expect(active.inClaim()).toBe(1);
    active.clear();
    expect(active.inClaim()).toBe(0);
    b.phase = 'settled';
    expect(active.inClaim()).toBe(0);
  });
});
