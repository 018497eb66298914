// What Node does not expose of a TCP socket: the kernel's round-trip estimate, and a fixed send
// buffer; through the small addon in lib/native (socket-options.c). Where the addon could not be
// built, both answer nothing and `socketOptionsUnavailable` says why.

import type { Socket } from 'node:net';
import { loadAddon } from './native-addon.ts';

interface Addon {
  roundTrip(fd: number): number;
  setSendBuffer(fd: number, bytes: number): boolean;
}

const loaded = loadAddon<Addon>('socket_options');

/** Why socket options cannot be read or set here, or undefined when they can. */
export const socketOptionsUnavailable: string | undefined = loaded.why;

function fdOf(socket: Socket): number | undefined {
  const fd = (socket as unknown as { _handle?: { fd?: unknown } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}

/** The connection's smoothed round-trip time in microseconds, or undefined when unknown. */
export function roundTripUs(socket: Socket): number | undefined {
  const fd = fdOf(socket);
  if (fd === undefined || !loaded.addon) return undefined;
  const us = loaded.addon.roundTrip(fd);
  return us >= 0 ? us : undefined;
}

/** Gives the socket a send buffer of `bytes` (SO_SNDBUF); false when it could not. */
export function setSendBuffer(socket: Socket, bytes: number): boolean {
  const fd = fdOf(socket);
  return fd !== undefined && loaded.addon !== undefined && loaded.addon.setSendBuffer(fd, bytes);
}
