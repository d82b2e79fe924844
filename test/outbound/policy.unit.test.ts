// The destination policy as pure functions: every spelling of a non-public address is refused, the
// allow list admits hosts, host:port pairs and CIDR ranges, and development allows everything.
import { expect } from 'chai';
import { loadSettings, SettingsError } from '../../src/config/settings.js';
import { destinationOf, destinationRefusal, isLoopbackHost, parseOutboundAllowList, specialRangeOf, type OutboundPolicy } from '../../src/outbound/policy.js';
import { emptyProjectDir } from '../support/service.js';

const PRODUCTION: OutboundPolicy = { enforced: true, allow: [] };

function policyAllowing(...entries: string[]): OutboundPolicy {
  const { allow, invalid } = parseOutboundAllowList(entries);
  expect(invalid).to.deep.equal([]);
  return { enforced: true, allow };
}

/** The refusal for a URL whose host is an address, or which resolved to `addresses`. */
function refusalFor(policy: OutboundPolicy, url: string, addresses?: string[]): string | undefined {
  const destination = destinationOf(new URL(url));
  return destinationRefusal(policy, destination, addresses ?? [destination.host]);
}

describe('the outbound destination policy', () => {
  describe('in production, refuses every spelling of this machine', () => {
    const loopbackSpellings = [
      'http://127.0.0.1/',
      'http://127.0.0.2:8080/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://0x7f000001/',
      'http://017700000001/',
      'http://0177.0.0.1/',
      'http://127.1/',
      'http://[::1]/',
      'http://[0:0:0:0:0:0:0:1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:7f00:1]/',
    ];
    for (const url of loopbackSpellings) {
      it(`${url} is loopback`, () => {
        expect(refusalFor(PRODUCTION, url)).to.match(/refused: .* is a loopback address/);
      });
    }

    for (const url of ['http://0.0.0.0/', 'http://0/', 'http://[::]/']) {
      it(`${url} is the unspecified address`, () => {
        expect(refusalFor(PRODUCTION, url)).to.match(/unspecified address/);
      });
    }

    it('localhost and a name that resolves to loopback are refused by the address they resolve to', () => {
      expect(refusalFor(PRODUCTION, 'http://localhost:11434/', ['127.0.0.1'])).to.equal(
        'outbound request to localhost:11434 refused: localhost resolves to 127.0.0.1, which is a loopback address; in production svc reaches public addresses only, and what SVC_OUTBOUND_ALLOW names',
      );
      expect(refusalFor(PRODUCTION, 'http://LocalHost./', ['::1'])).to.match(/localhost resolves to ::1, which is a loopback address/);
      expect(refusalFor(PRODUCTION, 'https://internal.example.com/', ['10.0.0.5'])).to.match(
        /internal\.example\.com:443 .* 10\.0\.0\.5, which is a private address/,
      );
    });

    it('a localhost name is loopback whatever a resolver answers, or when it answers nothing (RFC 6761)', () => {
      expect(refusalFor(PRODUCTION, 'http://localhost./', [])).to.match(/localhost:80 refused: .*loopback/);
      expect(refusalFor(PRODUCTION, 'http://api.localhost:8080/', ['93.184.216.34'])).to.match(/api\.localhost:8080 refused: .*loopback/);
      expect(refusalFor(policyAllowing('localhost:11434'), 'http://localhost:11434/', [])).to.equal(undefined);
    });

    it('a name with one public and one private address is refused (every address is checked)', () => {
      expect(refusalFor(PRODUCTION, 'https://rebind.example.com/', ['93.184.216.34', '127.0.0.1'])).to.match(/127\.0\.0\.1, which is a loopback/);
      expect(refusalFor(PRODUCTION, 'https://rebind.example.com/', ['93.184.216.34', '2606:2800:220:1::1'])).to.equal(undefined);
    });
  });

  describe('in production, refuses every non-public range', () => {
    const ranges: [string, RegExp][] = [
      ['http://10.0.0.1/', /private/],
      ['http://172.16.0.1/', /private/],
      ['http://172.31.255.254/', /private/],
      ['http://192.168.1.1/', /private/],
      ['http://169.254.169.254/latest/meta-data/', /link-local/],
      ['http://[fe80::1]/', /link-local/],
      ['http://[fc00::1]/', /unique-local/],
      ['http://[fd12:3456::1]/', /unique-local/],
      ['http://[fec0::1]/', /site-local/],
      ['http://100.64.0.1/', /carrier-grade NAT/],
      ['http://100.127.255.254/', /carrier-grade NAT/],
      ['http://224.0.0.251/', /multicast/],
      ['http://[ff02::1]/', /multicast/],
      ['http://255.255.255.255/', /broadcast/],
      ['http://240.0.0.1/', /reserved/],
      ['http://192.0.2.1/', /reserved/],
      ['http://198.51.100.7/', /reserved/],
      ['http://[2001:db8::1]/', /reserved/],
      ['http://[::ffff:10.0.0.1]/', /private/],
      ['http://[::ffff:169.254.169.254]/', /link-local/],
      ['http://[::127.0.0.1]/', /IPv4-compatible/],
      ['http://[64:ff9b::7f00:1]/', /special-purpose address \(rfc6052\)/],
      ['http://[2002:7f00:1::]/', /special-purpose address \(6to4\)/],
    ];
    for (const [url, reason] of ranges) {
      it(`${url} is refused (${reason.source})`, () => {
        expect(refusalFor(PRODUCTION, url)).to.match(reason);
      });
    }

    it('public addresses pass, in both families', () => {
      for (const url of [
        'https://93.184.216.34/',
        'http://8.8.8.8:53/',
        'https://[2606:4700:4700::1111]/',
        'http://[::ffff:8.8.8.8]/',
        'http://100.128.0.1/',
        'http://172.32.0.1/',
      ]) {
        expect(refusalFor(PRODUCTION, url), url).to.equal(undefined);
      }
    });

    it('a name is not judged until it resolves', () => {
      expect(refusalFor(PRODUCTION, 'https://api.example.com/', [])).to.equal(undefined);
    });
  });

  describe('SVC_OUTBOUND_ALLOW', () => {
    it('a host:port entry admits that host on that port only, whatever it resolves to', () => {
      const policy = policyAllowing('localhost:11434');
      expect(refusalFor(policy, 'http://localhost:11434/v1', ['127.0.0.1'])).to.equal(undefined);
      expect(refusalFor(policy, 'http://LOCALHOST.:11434/v1', ['127.0.0.1'])).to.equal(undefined);
      expect(refusalFor(policy, 'http://localhost:11435/v1', ['127.0.0.1'])).to.match(/loopback/);
      expect(refusalFor(policy, 'http://127.0.0.1:11434/v1')).to.match(/loopback/);
    });

    it('an address:port entry admits the address on that port however it is reached (by name or by another spelling)', () => {
      const policy = policyAllowing('127.0.0.1:8080');
      expect(refusalFor(policy, 'http://127.0.0.1:8080/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://2130706433:8080/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://[::ffff:127.0.0.1]:8080/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://localhost:8080/', ['127.0.0.1'])).to.equal(undefined);
      expect(refusalFor(policy, 'http://127.0.0.1:8081/')).to.match(/127\.0\.0\.1:8081 refused/);
    });

    it('a host entry without a port admits every port', () => {
      const policy = policyAllowing('ollama.internal', '10.0.0.9');
      expect(refusalFor(policy, 'http://ollama.internal:1/', ['10.1.1.1'])).to.equal(undefined);
      expect(refusalFor(policy, 'http://ollama.internal:65535/', ['10.1.1.1'])).to.equal(undefined);
      expect(refusalFor(policy, 'http://10.0.0.9:5/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://other.internal/', ['10.1.1.1'])).to.match(/private/);
    });

    it('IPv6 entries: bare, bracketed with a port, and in any spelling', () => {
      const policy = policyAllowing('::1', '[fd00::5]:8443');
      expect(refusalFor(policy, 'http://[0:0:0:0:0:0:0:1]:9/')).to.equal(undefined);
      expect(refusalFor(policy, 'https://[fd00:0::5]:8443/')).to.equal(undefined);
      expect(refusalFor(policy, 'https://[fd00::5]:8444/')).to.match(/unique-local/);
    });

    it('a CIDR range admits every address in it, literal or resolved, on every port; nothing next to it', () => {
      const policy = policyAllowing('10.20.0.0/16', 'fd00:1::/32');
      expect(refusalFor(policy, 'http://10.20.3.4:1234/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://svc.internal/', ['10.20.255.255'])).to.equal(undefined);
      expect(refusalFor(policy, 'http://[::ffff:10.20.0.1]/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://10.21.0.1/')).to.match(/private/);
      expect(refusalFor(policy, 'http://[fd00:1:2::3]/')).to.equal(undefined);
      expect(refusalFor(policy, 'http://[fd00:2::3]/')).to.match(/unique-local/);
      expect(refusalFor(policy, 'http://svc.internal/', ['10.20.0.1', '10.30.0.1']), 'one address outside the range').to.match(/10\.30\.0\.1/);
    });

    it('normalises entries the way URLs are normalised', () => {
      expect(parseOutboundAllowList(['LOCALHOST:11434', '0x7f.1:80', 'Example.COM.', '10.0.0.0/8', '[::1]:8080']).allow).to.deep.equal([
        { kind: 'host', host: 'localhost', port: 11434 },
        { kind: 'host', host: '127.0.0.1', port: 80 },
        { kind: 'host', host: 'example.com' },
        { kind: 'range', cidr: '10.0.0.0/8' },
        { kind: 'host', host: '::1', port: 8080 },
      ]);
    });

    it('answers the entries it cannot read', () => {
      const bad = ['http://localhost', 'localhost:0', 'localhost:70000', 'host:port', '10.0.0.0/33', '*.example.com', 'user@host', 'a/b', '[::1', '999.1.1.1'];
      expect(parseOutboundAllowList([...bad, 'ok.example.com']).invalid).to.deep.equal(bad);
    });

    it('is read by loadSettings, which refuses invalid entries, listing them', () => {
      const settings = loadSettings({ SVC_OUTBOUND_ALLOW: 'localhost:11434, 10.0.0.0/8' }, emptyProjectDir());
      expect(settings.outbound).to.deep.equal({
        enforced: false,
        allow: [
          { kind: 'host', host: 'localhost', port: 11434 },
          { kind: 'range', cidr: '10.0.0.0/8' },
        ],
      });
      expect(loadSettings({ SVC_ENV: 'production', SVC_SIGNING_KEY: 'ab'.repeat(32) }, emptyProjectDir()).outbound).to.deep.equal({
        enforced: true,
        allow: [],
      });
      let problems: readonly string[] = [];
      try {
        loadSettings({ SVC_OUTBOUND_ALLOW: 'good.example.com,http://bad,10.0.0.0/99' }, emptyProjectDir());
      } catch (error) {
        expect(error).to.be.instanceOf(SettingsError);
        problems = (error as SettingsError).problems;
      }
      expect(problems).to.have.length(1);
      expect(problems[0]).to.match(/SVC_OUTBOUND_ALLOW.*cannot read: http:\/\/bad, 10\.0\.0\.0\/99$/);
    });
  });

  it('in development everything is allowed', () => {
    const development: OutboundPolicy = { enforced: false, allow: [] };
    for (const url of ['http://127.0.0.1/', 'http://169.254.169.254/', 'http://[::1]/', 'http://10.0.0.1/']) {
      expect(refusalFor(development, url), url).to.equal(undefined);
    }
    expect(refusalFor(development, 'http://localhost/', ['127.0.0.1'])).to.equal(undefined);
  });

  it('specialRangeOf names the range, or nothing for a public address', () => {
    expect(specialRangeOf('127.0.0.1')).to.equal('loopback');
    expect(specialRangeOf('::ffff:192.168.0.1')).to.equal('private');
    expect(specialRangeOf('8.8.8.8')).to.equal(undefined);
    expect(specialRangeOf('2001:4860:4860::8888')).to.equal(undefined);
  });

  it('isLoopbackHost knows localhost by name and loopback addresses in any spelling', () => {
    for (const host of ['localhost', 'LOCALHOST.', 'api.localhost', '127.0.0.1', '127.9.9.9', '[::1]', '::1', '[::ffff:7f00:1]']) {
      expect(isLoopbackHost(host), host).to.equal(true);
    }
    for (const host of ['localhost.example.com', '10.0.0.1', '[fd00::1]', 'example.com', '0.0.0.0']) {
      expect(isLoopbackHost(host), host).to.equal(false);
    }
  });
});
