import { BlockList, isIP } from 'node:net';
import type { AppMiddleware, Client } from './context.js';

/**
 * Who is calling: the address the failed-authentication budget counts and the logs name, and
 * the scheme the client used. By default the socket's peer. Behind a reverse proxy listed in
 * DAYBOOK_TRUST_PROXY, the proxy's X-Forwarded-For and X-Forwarded-Proto say it instead; from
 * any other peer both headers are ignored, so a client cannot pick the address it is counted
 * under by inventing one.
 */


/** The ranges `loopback` stands for: IPv4's 127.0.0.0/8 and IPv6's ::1. */
const LOOPBACK_RANGES = ['127.0.0.0/8', '::1/128'];

/** The checked entries as a list to look addresses up in; null when no proxy is trusted. */
export function trustedProxies(entries: readonly string[]): BlockList | null {
  if (entries.length === 0) return null;
  const list = new BlockList();
  for (const entry of entries.flatMap((e) => (e === 'loopback' ? LOOPBACK_RANGES : [e]))) {
    const [address = '', bits] = entry.split('/');
    const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(bits), family);
  }
  return list;
}

/**
 * One spelling per address: an IPv4 client of a dual-stack socket (::ffff:a.b.c.d) is
 * a.b.c.d, and an IPv6 address loses its zone (%eth0) and is written as RFC 5952 says
 * (2001:DB8:0:0::1 is 2001:db8::1), so one client is always counted and logged as one.
 */
export function plainAddress(address: string): string {
  const mapped = /^::ffff:([0-9.]+)$/i.exec(address)?.[1];
  if (mapped !== undefined && isIP(mapped) === 4) return mapped;
  const unzoned = address.replace(/%.*$/, '');
  if (isIP(unzoned) !== 6) return address;
  try {
    return new URL(`http://[${unzoned}]`).hostname.slice(1, -1);
  } catch {
    return unzoned;
  }
}

/**
 * What the failed-authentication budget counts a client as: its IPv4 address, or its IPv6
 * /64. A machine is given a whole /64 and may take any address in it (privacy addresses
 * change by the day), so counting single IPv6 addresses would let it spread its guesses.
 */
export function budgetSubject(address: string): string {
  if (isIP(address) !== 6) return address;
  return `${ipv6Groups(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address in the form plainAddress writes. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  return [...left, ...Array.from({ length: 8 - left.length - right.length }, () => '0'), ...right];
}

function isTrusted(list: BlockList, address: string): boolean {
  const family = isIP(address);
  return family !== 0 && list.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * One hop of X-Forwarded-For as an address: bare, or with a port as some proxies write it
 * (1.2.3.4:5678, [2001:db8::1]:5678); null when it is no address at all.
 */
function hopAddress(hop: string): string | null {
  const bracketed = /^\[([^\]]+)\](?::[0-9]+)?$/.exec(hop)?.[1];
  const withPort = /^([0-9.]+):[0-9]+$/.exec(hop)?.[1];
  const address = plainAddress(bracketed ?? withPort ?? hop);
  return isIP(address) === 0 ? null : address;
}

/**
 * The client behind `peer`. When the peer is trusted, X-Forwarded-For is walked from the
 * right, each hop appended by the proxy that received it: the first hop that is not itself a
 * trusted proxy is the client. A hop that is no address stops the walk at the last address
 * before it, as does a list of trusted hops only. The scheme is the right-most value of
 * X-Forwarded-Proto, the one the peer set.
 */
export function clientOf(peer: string, headers: { forwardedFor?: string; forwardedProto?: string }, trusted: BlockList | null, socketScheme: Client['scheme']): Client {
  const direct = plainAddress(peer);
  if (!trusted || !isTrusted(trusted, direct)) return { address: direct, scheme: socketScheme };
  let address = direct;
  const hops = (headers.forwardedFor ?? '').split(',').map((hop) => hop.trim()).filter((hop) => hop !== '');
  for (const hop of hops.reverse()) {
    const next = hopAddress(hop);
    if (next === null) break;
    address = next;
    if (!isTrusted(trusted, next)) break;
  }
  const proto = (headers.forwardedProto ?? '').split(',').pop()?.trim().toLowerCase();
  return { address, scheme: proto === 'https' || proto === 'http' ? proto : socketScheme };
}

/** Sets ctx.state.client for the steps after it (the auth budget, the access log). */
export function identifyClient(trusted: BlockList | null): AppMiddleware {
  return async (ctx, next) => {
    const socket = ctx.req.socket as typeof ctx.req.socket & { encrypted?: boolean };
    ctx.state.client = clientOf(
      socket.remoteAddress ?? 'unknown',
      { forwardedFor: ctx.get('x-forwarded-for'), forwardedProto: ctx.get('x-forwarded-proto') },
      trusted,
      socket.encrypted ? 'https' : 'http',
    );
    await next();
  };
}
