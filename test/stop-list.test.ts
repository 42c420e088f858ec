/**
 * The bot's one ordered stop list (src/app/stop-list.ts), on its own: parts registered in any
 * order stop in the declared order, a part never registered is skipped, a close that fails is
 * logged and the stop goes on, a close that hangs is waited for at most `closeMs` when given, and
 * a save that fails is returned as what could not be saved.
 */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { StopList } from '../src/app/stop-list.js';
import { LogCapture } from './support/log-capture.js';

function capture() {
  const out = new LogCapture();
  return { out, log: pino({ level: 'info' }, out) };
}

describe('StopList', () => {
  it('stops in the declared order whatever the registration order, skipping what was never registered', async () => {
    const ran: string[] = [];
    const stops = new StopList();
    const { log } = capture();
    stops.close('fourthwall', () => ran.push('fourthwall'));
    stops.save('history', 'the draw history', async () => void ran.push('history'));
    stops.close('chat', async () => void ran.push('chat'));
    stops.save('engine', 'the open draws', async () => void ran.push('engine'));
    stops.close('http', () => ran.push('http'));
    stops.close('delivery', async () => void ran.push('delivery'));
    stops.close('drain', async () => void ran.push('drain'));
    expect(await stops.run(log)).toEqual([]);
    expect(ran).toEqual(['http', 'delivery', 'engine', 'history', 'drain', 'chat', 'fourthwall']);
  });

  it('a failed close is logged and the rest still stop; a failed save is returned as what could not be saved', async () => {
    const ran: string[] = [];
    const stops = new StopList();
    const { out, log } = capture();
    stops.close('http', () => Promise.reject(new Error('socket stuck')));
    stops.save('engine', 'the open draws', () => Promise.reject(new Error('ENOSPC')));
    stops.save('history', 'the draw history', async () => void ran.push('history'));
    stops.close('chat', () => {
      throw new Error('not connected');
    });
    stops.close('fourthwall', () => ran.push('fourthwall'));
    expect(await stops.run(log)).toEqual(['the open draws could not be saved (ENOSPC)']);
    expect(ran).toEqual(['history', 'fourthwall']);
    const lines = out.json();
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(['http: stop failed', 'chat: stop failed']);
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toEqual(['the open draws could not be saved']);
  });

  it('with closeMs a hanging close is left behind after that long, while a save is always awaited in full', async () => {
    const ran: string[] = [];
    const stops = new StopList();
    const { log } = capture();
    let finishSave!: () => void;
    const saveStarted = new Promise<void>((started) => {
      stops.save('history', 'the draw history', () => {
        started();
        return new Promise<void>((r) => (finishSave = r)).then(() => void ran.push('history'));
      });
    });
    stops.close('http', () => new Promise(() => undefined)); // never settles
    stops.close('fourthwall', () => ran.push('fourthwall'));
    const run = stops.run(log, { closeMs: 20 });
    await saveStarted; // the hanging close was left behind
    expect(ran).toEqual([]);
    finishSave();
    expect(await run).toEqual([]);
    expect(ran).toEqual(['history', 'fourthwall']);
  });

  it('refuses a part registered twice', () => {
    const stops = new StopList();
    stops.close('chat', () => undefined);
    expect(() => stops.close('chat', () => undefined)).toThrow('stop list: chat registered twice');
  });
});
