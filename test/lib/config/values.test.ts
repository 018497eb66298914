import { describe, expect, it } from 'vitest';
import {
  bool,
  cidr,
  duration,
  formatDuration,
  formatSize,
  hostPort,
  int,
  list,
  oneOf,
  parseSize,
  size,
  url,
  ValueError,
} from '../../../lib/config/values.ts';

describe('sizes', () => {
  it('reads binary and decimal units', () => {
    expect(parseSize('256MiB')).toBe(256 * 2 ** 20);
    expect(parseSize('1GB')).toBe(1e9);
    expect(parseSize('4k')).toBe(4000);
    expect(parseSize('1048576')).toBe(1048576);
    expect(parseSize('1.5 GiB')).toBe(1.5 * 2 ** 30);
  });
  it('refuses unknown units with what is allowed', () => {
    expect(() => parseSize('12XB')).toThrow(/expected a size such as 512MiB/);
    expect(() => size(1024).parse('10')).toThrow(/from 1KiB/);
  });
  it('formats round sizes back', () => {
    expect(formatSize(2 ** 30)).toBe('1GiB');
    expect(formatSize(1000)).toBe('1000');
  });
});

describe('durations', () => {
  it('reads units, a bare number is seconds', () => {
    const d = duration();
    expect(d.parse('250ms')).toBe(250);
    expect(d.parse('5s')).toBe(5000);
    expect(d.parse('2m')).toBe(120_000);
    expect(d.parse(30)).toBe(30_000);
    expect(formatDuration(180_000)).toBe('3m');
  });
  it('enforces bounds', () => {
    expect(() => duration(1000, 5000).parse('10s')).toThrow(ValueError);
  });
});

describe('host and port', () => {
  it('reads v4, v6 and bare-port forms', () => {
    expect(hostPort().parse('0.0.0.0:3128')).toEqual({ host: '0.0.0.0', port: 3128 });
    expect(hostPort().parse('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(hostPort().parse(':3128')).toEqual({ host: '0.0.0.0', port: 3128 });
  });
  it('refuses bad ports', () => {
    expect(() => hostPort().parse('localhost:99999')).toThrow(/HOST:PORT/);
    expect(() => hostPort().parse('localhost')).toThrow(/HOST:PORT/);
  });
});

describe('other types', () => {
  it('booleans, integers, enums', () => {
    expect(bool().parse('yes')).toBe(true);
    expect(bool().parse(false)).toBe(false);
    expect(() => bool().parse('maybe')).toThrow(/true or false/);
    expect(int(1, 10).parse('7')).toBe(7);
    expect(() => int(1, 10).parse('11')).toThrow(/from 1 to 10/);
    expect(() => int(1, 10).parse('3.5')).toThrow(ValueError);
    expect(oneOf(['a', 'b'] as const).parse('b')).toBe('b');
    expect(() => oneOf(['a', 'b'] as const).parse('c')).toThrow(/one of a, b/);
  });
  it('urls keep their text and check the scheme', () => {
    expect(url().parse('http://s1.example.org/cvmfs')).toBe('http://s1.example.org/cvmfs');
    expect(() => url(['amqp:', 'amqps:']).parse('http://x')).toThrow(/amqp:\/\//);
    // Port 0 is read by clients as "no port" and sent to the scheme's default port instead.
    expect(() => url().parse('http://127.0.0.1:0')).toThrow(/port from 1 to 65535/);
    expect(() => url(['amqp:', 'amqps:']).parse('amqp://h:00')).toThrow(/port from 1 to 65535/);
  });
  it('lists from commas, arrays and repeated flags', () => {
    const l = list(cidr());
    expect(l.parse('10.0.0.0/8, 192.168.0.0/16')).toEqual(['10.0.0.0/8', '192.168.0.0/16']);
    expect(l.parse(['127.0.0.1', '::1/128'])).toEqual(['127.0.0.1/32', '::1/128']);
    expect(() => l.parse('10.0.0.0/33')).toThrow(/CIDR/);
  });
});
