// SSRF matrix for the directory fetcher: refused URLs and addresses never open a socket or reach a loopback listener.
import net from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MockInstance } from 'vitest';
import { createSafeDirectoryFetcher } from '../../../src/adapters/node/index.js';
import type { DirectoryLookup } from '../../../src/adapters/node/index.js';
import { makeSelfSignedCert, opensslAvailable, startHttpsServer } from '../../helpers/https-server.js';
import type { SelfSignedCert, TestHttpsServer } from '../../helpers/https-server.js';
import { failureCode } from '../../helpers/directory-fetch.js';


describe.skipIf(!opensslAvailable())('directory fetcher SSRF rules', () => {
  let cert: SelfSignedCert;
  let v4: TestHttpsServer;
  let v6: TestHttpsServer;
  let connects: MockInstance;
  let lookups: string[];
  const recordingLookup =
    (answer: string | readonly string[]): DirectoryLookup =>
    (host) => {
      lookups.push(host);
      return answer;
    };
  const total = (): number => v4.connections() + v6.connections() + v4.requests.length + v6.requests.length;
  let baseline = 0;
  /** Connections plus requests that reached either loopback listener during the current test. */
  const reached = (): number => total() - baseline;

  beforeAll(async () => {
    cert = makeSelfSignedCert(['directory.test', 'localhost'], ['127.0.0.1', '::1']);
    const ok = (_req: unknown, res: import('node:http').ServerResponse): void => {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}');
    };
    v4 = await startHttpsServer(cert, ok, '127.0.0.1');
    v6 = await startHttpsServer(cert, ok, '::1');
  });
  afterAll(async () => {
    await v4.close();
    await v6.close();
  });
  beforeEach(() => {
    lookups = [];
    baseline = total();
    // Every client TCP connection (TLS sockets included) goes through net.Socket#connect.
    connects = vi.spyOn(net.Socket.prototype, 'connect');
  });
  afterEach(() => {
    connects.mockRestore();
  });

  describe('refused URLs (refused-url, nothing resolved or connected)', () => {
    it.each([
      ['http://directory.test/.well-known/http-message-signatures-directory'],
      ['ftp://directory.test/'],
      ['file:///etc/passwd'],
      ['https://user:pass@directory.test/'],
      ['https://user@directory.test/'],
      ['https://:pass@directory.test/'],
      ['https://directory.test:8443/'],
      ['https://directory.test:80/'],
      ['https://directory.test./'],
      ['https://localhost./'],
      ['https://intranet/'],
      ['https://ex_ample.test/'],
      ['https://-bad.test/'],
      ['not a url'],
      [''],
    ])('%s', async (url) => {
      const fetchDirectory = createSafeDirectoryFetcher({ lookup: recordingLookup('8.8.8.8') });
      expect(await failureCode(fetchDirectory(url, {}))).toBe('refused-url');
      expect(lookups).toEqual([]);
      expect(connects).not.toHaveBeenCalled();
    });

    it('allows another port only when listed in ports (then the address rules still apply)', async () => {
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [8443], lookup: recordingLookup('10.0.0.1') });
      expect(await failureCode(fetchDirectory('https://directory.test:8443/', {}))).toBe('refused-address');
      expect(await failureCode(fetchDirectory('https://directory.test/', {}))).toBe('refused-url');
      expect(lookups).toEqual(['directory.test']);
      // The socket was asked to connect, resolved the name and got a refusal: no TCP attempt.
      expect(connects).toHaveBeenCalledTimes(1);
    });

    it('treats an explicit :443 as the default port', async () => {
      const fetchDirectory = createSafeDirectoryFetcher({ lookup: recordingLookup('127.0.0.1') });
      expect(await failureCode(fetchDirectory('https://directory.test:443/', {}))).toBe('refused-address');
      expect(lookups).toEqual(['directory.test']);
    });
  });

  describe('IP-literal hosts (refused-address before any socket)', () => {
    const port = (): number => v4.port;
    it.each([
      // loopback in every spelling the URL parser folds to 127.0.0.1
      ['127.0.0.1'],
      ['127.1'],
      ['2130706433'],
      ['0x7f000001'],
      ['0177.0.0.1'],
      ['0x7f.1'],
      ['127.0.0.2'],
      ['127.0.0.1.'],
      ['%31%32%37.0.0.1'],
      ['\uff11\uff12\uff17.\uff10.\uff10.\uff11'], // full-width digits, folded by IDNA mapping
      ['[::ffff:127.0.0.1]'],
      ['[::ffff:7f00:1]'],
      ['[::127.0.0.1]'],
      ['[64:ff9b::127.0.0.1]'],
      ['[2002:7f00:1::1]'],
      // private, CGNAT, link-local, metadata, unique-local and special
      ['10.0.0.1'],
      ['172.16.0.1'],
      ['192.168.1.1'],
      ['100.64.0.1'],
      ['169.254.1.1'],
      ['169.254.169.254'],
      ['[::ffff:169.254.169.254]'],
      ['[64:ff9b::a9fe:a9fe]'],
      ['[fd00:ec2::254]'],
      ['[fc00::1]'],
      ['[fe80::1]'],
      ['0.0.0.0'],
      ['0'],
      ['[::]'],
      ['255.255.255.255'],
      ['224.0.0.1'],
      ['[ff02::1]'],
      ['192.0.2.1'],
      ['198.51.100.1'],
      ['203.0.113.1'],
      ['198.18.0.1'],
      ['240.0.0.1'],
      ['[2001:db8::1]'],
      ['[2001:0:4136:e378:8000:63bf:3fff:fdd2]'],
    ])('https://%s is refused', async (host) => {
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [443, port()], lookup: recordingLookup('8.8.8.8') });
      expect(await failureCode(fetchDirectory(`https://${host}:${port()}/.well-known/http-message-signatures-directory`, {}))).toBe(
        'refused-address',
      );
      expect(await failureCode(fetchDirectory(`https://${host}/`, {}))).toBe('refused-address');
      expect(lookups).toEqual([]);
      expect(connects).not.toHaveBeenCalled();
      expect(reached()).toBe(0);
    });

    it('https://[::1] is refused and the ::1 listener sees nothing', async () => {
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [v6.port], ca: cert.cert });
      expect(await failureCode(fetchDirectory(v6.url('/'), {}))).toBe('refused-address');
      expect(connects).not.toHaveBeenCalled();
      expect(reached()).toBe(0);
    });

    it.each([['localhost'], ['api.localhost']])('https://%s is refused without resolving it', async (host) => {
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [v4.port], lookup: recordingLookup('8.8.8.8') });
      expect(await failureCode(fetchDirectory(`https://${host}:${v4.port}/`, {}))).toBe('refused-address');
      expect(lookups).toEqual([]);
      expect(connects).not.toHaveBeenCalled();
    });
  });

  describe('names resolving to refused addresses (checked at connect time)', () => {
    it.each([
      ['127.0.0.1'],
      ['127.8.9.10'],
      ['::1'],
      ['::ffff:127.0.0.1'],
      ['10.1.2.3'],
      ['172.20.0.5'],
      ['192.168.0.10'],
      ['100.64.1.1'],
      ['169.254.169.254'],
      ['fd00:ec2::254'],
      ['fe80::1%eth0'],
      ['fd12:3456::1'],
      ['0.0.0.0'],
      ['::'],
      ['64:ff9b::a00:1'],
      ['2002:c0a8:101::1'],
      ['ff02::1'],
    ])('a name resolving to %s is refused', async (address) => {
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [v4.port], ca: cert.cert, lookup: recordingLookup(address) });
      expect(await failureCode(fetchDirectory(`https://directory.test:${v4.port}/`, {}))).toBe('refused-address');
      expect(lookups).toEqual(['directory.test']);
      // The socket was asked to connect, resolved the name and got a refusal before any SYN.
      expect(connects).toHaveBeenCalledTimes(1);
      expect(reached()).toBe(0);
    });

    it('refuses a name when any of its addresses is refused', async () => {
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [v4.port], ca: cert.cert, lookup: recordingLookup(['8.8.8.8', '127.0.0.1']) });
      expect(await failureCode(fetchDirectory(`https://directory.test:${v4.port}/`, {}))).toBe('refused-address');
      expect(reached()).toBe(0);
    });

    it('defeats DNS rebinding: an earlier public answer does not let a private connect-time answer through', async () => {
      const answers = ['93.184.215.14', '127.0.0.1'];
      const rebinding: DirectoryLookup = (host) => {
        lookups.push(host);
        return answers.shift() ?? '127.0.0.1';
      };
      // A caller (or an earlier validation step) resolves the name and sees a public address...
      expect(await rebinding('rebind.test')).toBe('93.184.215.14');
      // ...then the record flips; the fetch resolves at connect time and checks that answer.
      const fetchDirectory = createSafeDirectoryFetcher({ ports: [v4.port], ca: cert.cert, lookup: rebinding });
      expect(await failureCode(fetchDirectory(`https://rebind.test:${v4.port}/`, {}))).toBe('refused-address');
      expect(lookups).toEqual(['rebind.test', 'rebind.test']);
      expect(reached()).toBe(0);
    });

    it('connects to exactly the address the lookup returned, resolving once per fetch', async () => {
      const fetchDirectory = createSafeDirectoryFetcher({ allowLoopback: true, ports: [v4.port], ca: cert.cert, lookup: recordingLookup('127.0.0.1') });
      const response = await fetchDirectory(`https://directory.test:${v4.port}/`, {});
      expect(response.status).toBe(200);
      expect(lookups).toEqual(['directory.test']);
      expect(reached()).toBe(2); // one connection, one request
      expect(v4.requests.at(-1)?.headers.host).toBe(`directory.test:${v4.port}`);
    });

    it('allowLoopback admits loopback only, never private or metadata addresses', async () => {
      for (const address of ['10.0.0.1', '169.254.169.254', 'fd00:ec2::254', '192.168.1.1']) {
        const fetchDirectory = createSafeDirectoryFetcher({ allowLoopback: true, ports: [v4.port], lookup: recordingLookup(address) });
        expect(await failureCode(fetchDirectory(`https://directory.test:${v4.port}/`, {}))).toBe('refused-address');
      }
      const literal = createSafeDirectoryFetcher({ allowLoopback: true });
      expect(await failureCode(literal('https://169.254.169.254/latest/meta-data/', {}))).toBe('refused-address');
      expect(reached()).toBe(0);
    });
  });
});
