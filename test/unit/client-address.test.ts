import { expect } from 'chai';
import { budgetSubject, clientOf, plainAddress, trustedProxies } from '../../src/http/client-address.js';
import { parseTrustList } from '../../src/trust-list.js';

/** The client a request counts as, from its peer and the X-Forwarded-* headers (issue: trusted proxies). */
describe('client address', () => {
  const trust = (list: string) => trustedProxies(parseTrustList(list));
  const client = (peer: string, forwardedFor: string | undefined, list: string, forwardedProto?: string) =>
    clientOf(peer, { ...(forwardedFor === undefined ? {} : { forwardedFor }), ...(forwardedProto === undefined ? {} : { forwardedProto }) }, trust(list), 'http');

  describe('the trust list', () => {
    it('reads addresses, ranges and loopback, split by commas or spaces', () => {
      expect(parseTrustList('10.0.0.0/8, loopback 2001:db8::/32,192.168.1.5')).to.deep.equal(['10.0.0.0/8', 'loopback', '2001:db8::/32', '192.168.1.5']);
    });

    it('reads off as no proxy at all', () => {
      expect(parseTrustList('off')).to.deep.equal([]);
      expect(trustedProxies([])).to.equal(null);
    });

    for (const bad of ['proxy.local', '10.0.0.0/33', '::/129', '1.2.3.4/-1', '1.2.3.4/', '1.2.3.4/8/8', 'off,10.0.0.1']) {
      it(`refuses ${JSON.stringify(bad)}`, () => {
        expect(() => parseTrustList(bad)).to.throw(/is not an address or a CIDR range|has a prefix length outside/);
      });
    }

    it('loopback covers 127.0.0.0/8 and ::1, not the rest', () => {
      const list = trust('loopback')!;
      expect(['127.0.0.1', '127.9.9.9'].map((a) => list.check(a, 'ipv4'))).to.deep.equal([true, true]);
      expect(list.check('::1', 'ipv6')).to.equal(true);
      expect(list.check('128.0.0.1', 'ipv4')).to.equal(false);
      expect(list.check('::2', 'ipv6')).to.equal(false);
    });
  });

  describe('with no proxy trusted', () => {
    it('is the peer, whatever the headers say', () => {
      expect(clientOf('203.0.113.9', { forwardedFor: '198.51.100.1', forwardedProto: 'https' }, null, 'http')).to.deep.equal({ address: '203.0.113.9', scheme: 'http' });
    });
  });

  describe('from a peer that is not trusted', () => {
    it('ignores X-Forwarded-For and X-Forwarded-Proto (a client cannot choose the address it is counted under)', () => {
      expect(client('203.0.113.9', '198.51.100.1', '10.0.0.0/8', 'https')).to.deep.equal({ address: '203.0.113.9', scheme: 'http' });
    });

    it('ignores them from an IPv6 peer too', () => {
      expect(client('2001:db8::9', '198.51.100.1', 'fd00::/8', 'https')).to.deep.equal({ address: '2001:db8::9', scheme: 'http' });
    });
  });

  describe('from a trusted proxy', () => {
    it('is the address the proxy appended', () => {
      expect(client('10.0.0.2', '198.51.100.7', '10.0.0.0/8', 'https')).to.deep.equal({ address: '198.51.100.7', scheme: 'https' });
    });

    it('is the right-most untrusted hop: what the client wrote to the left of it is ignored', () => {
      // The client sent "X-Forwarded-For: 1.1.1.1"; the proxy appended the address it saw.
      expect(client('10.0.0.2', '1.1.1.1, 198.51.100.7', '10.0.0.0/8').address).to.equal('198.51.100.7');
    });

    it('walks past a chain of trusted proxies to the first one that is not', () => {
      expect(client('10.0.0.2', '1.1.1.1, 198.51.100.7, 10.0.0.9, 10.0.0.3', '10.0.0.0/8').address).to.equal('198.51.100.7');
    });

    it('is the left-most hop when every hop is trusted', () => {
      expect(client('10.0.0.2', '10.0.0.7, 10.0.0.3', '10.0.0.0/8').address).to.equal('10.0.0.7');
    });

    it('stops at a hop that is no address, keeping the last address before it', () => {
      expect(client('10.0.0.2', 'garbage, 10.0.0.5', '10.0.0.0/8').address).to.equal('10.0.0.5');
      expect(client('10.0.0.2', 'unknown', '10.0.0.0/8').address).to.equal('10.0.0.2');
    });

    it('is the peer when the proxy sent no X-Forwarded-For', () => {
      expect(client('10.0.0.2', undefined, '10.0.0.0/8')).to.deep.equal({ address: '10.0.0.2', scheme: 'http' });
    });

    it('reads hops written with a port, and IPv6 hops with or without brackets', () => {
      expect(client('10.0.0.2', '198.51.100.7:51234', '10.0.0.0/8').address).to.equal('198.51.100.7');
      expect(client('10.0.0.2', '[2001:db8::7]:51234', '10.0.0.0/8').address).to.equal('2001:db8::7');
      expect(client('10.0.0.2', '2001:db8::7', '10.0.0.0/8').address).to.equal('2001:db8::7');
    });

    it('trusts an IPv6 proxy by its range', () => {
      expect(client('fd00::2', '2001:db8::7', 'fd00::/8').address).to.equal('2001:db8::7');
      expect(client('::1', '198.51.100.7', 'loopback').address).to.equal('198.51.100.7');
    });

    it('takes the scheme the proxy set (the right-most value), and only http or https', () => {
      expect(client('10.0.0.2', '198.51.100.7', '10.0.0.0/8', 'http, https').scheme).to.equal('https');
      expect(client('10.0.0.2', '198.51.100.7', '10.0.0.0/8', 'https, http').scheme).to.equal('http');
      expect(client('10.0.0.2', '198.51.100.7', '10.0.0.0/8', 'gopher').scheme).to.equal('http');
    });
  });

  it('writes one address one way: IPv6 in its short lower-case form, without a zone', () => {
    expect(plainAddress('2001:DB8:0:0::1')).to.equal('2001:db8::1');
    expect(plainAddress('2001:db8:0000:0000:0000:0000:0000:0001')).to.equal('2001:db8::1');
    expect(plainAddress('fe80::1%eth0')).to.equal('fe80::1');
    expect(plainAddress('198.51.100.7')).to.equal('198.51.100.7');
    expect(client('10.0.0.2', '2001:DB8::7', '10.0.0.0/8').address).to.equal('2001:db8::7');
  });

  it('counts failed authentications of an IPv6 client by its /64, an IPv4 client by its address', () => {
    expect(budgetSubject('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).to.equal('2001:db8:1:2::/64');
    expect(budgetSubject('2001:db8:1:2::9')).to.equal('2001:db8:1:2::/64');
    expect(budgetSubject('2001:db8::1')).to.equal('2001:db8:0:0::/64');
    expect(budgetSubject('::1')).to.equal('0:0:0:0::/64');
    expect(budgetSubject('198.51.100.7')).to.equal('198.51.100.7');
  });

  it('sees an IPv4 client of a dual-stack socket as IPv4', () => {
    expect(plainAddress('::ffff:10.0.0.2')).to.equal('10.0.0.2');
    expect(plainAddress('::ffff:abcd')).to.equal('::ffff:abcd');
    expect(client('::ffff:10.0.0.2', '198.51.100.7', '10.0.0.0/8').address).to.equal('198.51.100.7');
  });
});
