/**
 * The machine's process tree as the tests see it, read from /proc (Linux): which processes are
 * alive and which descend from a given pid. A zombie (state Z: exited, not yet reaped) counts as
 * gone. Used by the tests that check a stop leaves no process behind.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** pid -> parent pid of every live process, from /proc/<pid>/stat (state Z counts as gone). */
function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // "pid (comm) state ppid ...": comm may hold spaces and parentheses
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') table.set(Number(name), Number(ppid));
    } catch {
      // exited while we looked
    }
  }
  return table;
}

/** Every live process below `pid`, children first. */
export function descendants(pid: number): number[] {
  const table = processTable();
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of table)
      if (parent === p) {
        out.push(child);
        walk(child);
      }
  };
  walk(pid);
  return out;
}

/** Whether `pid` is a live (not zombie) process. */
export const alive = (pid: number): boolean => processTable().has(pid);
