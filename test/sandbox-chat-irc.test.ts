/**
 * The sandbox chat server's IRC wire helpers: line parsing (tags, prefix, params, trailing),
 * IRCv3 tag escaping both ways, and tag stripping.
 */
import { describe, expect, it } from 'vitest';
import { escapeTag, formatTags, parseLine, stripTags, unescapeTag } from '../src/sandbox/chat/irc.js';

describe('parseLine', () => {
  it('reads tags, prefix, command, middle and trailing params', () => {
    expect(parseLine('@reply-parent-msg-id=abc;client-nonce=x\\sy :nick!u@h privmsg #chan :hello : world')).toEqual({
      tags: { 'reply-parent-msg-id': 'abc', 'client-nonce': 'x y' },
      prefix: 'nick!u@h',
      command: 'PRIVMSG',
      params: ['#chan', 'hello : world'],
    });
    expect(parseLine('CAP REQ :twitch.tv/tags twitch.tv/commands')).toEqual({
      tags: {},
      command: 'CAP',
      params: ['REQ', 'twitch.tv/tags twitch.tv/commands'],
    });
    expect(parseLine('PING')).toEqual({ tags: {}, command: 'PING', params: [] });
    expect(parseLine('JOIN  #a,#b')).toEqual({ tags: {}, command: 'JOIN', params: ['#a,#b'] });
    expect(parseLine(':tmi.twitch.tv 001 bot :Welcome, GLHF!')?.params).toEqual(['bot', 'Welcome, GLHF!']);
    expect(parseLine('PRIVMSG #c :')?.params).toEqual(['#c', '']);
  });

  it('returns undefined for what is not IRC', () => {
    for (const bad of ['', '   ', '@only-tags', ':prefixonly', '{"json":true}', '@a=b :p 12x']) {
      expect(parseLine(bad)).toBeUndefined();
    }
  });
});

describe('tag escaping', () => {
  it('escapes and unescapes per IRCv3', () => {
    expect(escapeTag('a b;c\\d\r\ne')).toBe('a\\sb\\:c\\\\d\\r\\ne');
    expect(unescapeTag('a\\sb\\:c\\\\d\\r\\ne')).toBe('a b;c\\d\r\ne');
    expect(unescapeTag('x\\qy\\')).toBe('xqy');
    for (const s of ['plain', 'with space', ';;', '\\s literally', 'ünï ☃ 🎁'])
      expect(unescapeTag(escapeTag(s))).toBe(s);
    expect(escapeTag('same')).toBe('same');
  });

  it('formats a tag block and strips it', () => {
    expect(formatTags({ a: 'x y', n: 3, empty: '' })).toBe('@a=x\\sy;n=3;empty= ');
    expect(formatTags({})).toBe('');
    expect(stripTags('@a=1 :p PRIVMSG #c :hi')).toBe(':p PRIVMSG #c :hi');
    expect(stripTags(':p PRIVMSG #c :@hi')).toBe(':p PRIVMSG #c :@hi');
  });
});
