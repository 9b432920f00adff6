import { describe, expect, it } from 'vitest';
import { failedAtProxy, noProxyMatches, proxyFor, shownProxyUrl } from '../../src/client/proxy.js';
import { ConfigError } from '../../src/config/errors.js';
import { proxySettings, proxyUrl } from '../../src/config/proxy.js';

describe('proxyUrl: a proxy variable as undici takes it, checked before anything is sent', () => {
  it.each([
    ['http://proxy.corp:3128', 'http://proxy.corp:3128/'],
    ['https://proxy.corp', 'https://proxy.corp/'],
    // As curl takes them: no scheme means http://, no port 1080 (443 for https://), a path or query is ignored.
    ['proxy.corp:3128', 'http://proxy.corp:3128/'],
    ['http://proxy.corp', 'http://proxy.corp:1080/'],
    ['proxy.corp', 'http://proxy.corp:1080/'],
    ['http://proxy.corp:80', 'http://proxy.corp/'],
    ['http://proxy.corp:3128/p', 'http://proxy.corp:3128/'],
    ['http://proxy.corp:3128/a/b?c=d#e', 'http://proxy.corp:3128/'],
    ['http://u:p@proxy.corp:3128/path/', 'http://u:p@proxy.corp:3128/'],
    ['127.0.0.1:3128', 'http://127.0.0.1:3128/'],
    ['[::1]:3128', 'http://[::1]:3128/'],
    ['user:p%40ss@proxy.corp:3128', 'http://user:p%40ss@proxy.corp:3128/'],
  ])('takes %s as %s', (value, url) => {
    expect(proxyUrl('HTTPS_PROXY', value)).toBe(url);
  });

  it.each([
    ['http://', 'invalid proxy in HTTPS_PROXY: it is not a URL'],
    ['http://[::1', 'invalid proxy in HTTPS_PROXY: it is not a URL'],
    ['http://proxy:99999', 'invalid proxy in HTTPS_PROXY: it is not a URL'],
    ['socks5://127.0.0.1:1080', 'invalid proxy in HTTPS_PROXY: kb sends through http:// and https:// proxies, not socks5://'],
    ['ftp://proxy.corp', 'invalid proxy in HTTPS_PROXY: kb sends through http:// and https:// proxies, not ftp://'],
    ['file:///tmp/x', 'invalid proxy in HTTPS_PROXY: kb sends through http:// and https:// proxies, not file://'],
  ])('refuses %j: exit 2, naming the variable and not repeating the value', (value, message) => {
    let thrown: unknown;
    try {
      proxyUrl('HTTPS_PROXY', value);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(thrown).toMatchObject({ message, exitCode: 2, help: 'Set HTTPS_PROXY to a URL such as http://proxy.example.com:3128, or unset it.' });
  });

  it('checks every variable that is set, even the one a request would not use', () => {
    const variables = { http: { name: 'HTTP_PROXY', value: 'http://ok:1' }, https: { name: 'https_proxy', value: 'socks5://x' }, noProxy: undefined };
    expect(() => proxySettings(variables)).toThrow('invalid proxy in https_proxy');
    expect(proxySettings(undefined)).toBeUndefined();
    expect(proxySettings({ ...variables, https: undefined, noProxy: 'localhost' })).toEqual({
      noProxy: 'localhost',
      http: { url: 'http://ok:1/', variable: 'HTTP_PROXY' },
    });
  });

  it('reads ALL_PROXY too, and checks it as the others', () => {
    const variables = { http: undefined, https: undefined, all: { name: 'all_proxy', value: 'proxy.corp:3128/x' }, noProxy: undefined };
    expect(proxySettings(variables)).toEqual({ all: { url: 'http://proxy.corp:3128/', variable: 'all_proxy' } });
    expect(() => proxySettings({ ...variables, all: { name: 'ALL_PROXY', value: 'socks5://x:1' } })).toThrow('invalid proxy in ALL_PROXY');
  });
});

describe('noProxyMatches: NO_PROXY as curl reads it', () => {
  it.each([
    // Host names and domains: an exact name, or any name below it; a leading dot changes nothing; case and trailing dots ignored.
    ['kb.corp', 'kb.corp', true],
    ['corp', 'kb.corp', true],
    ['.corp', 'kb.corp', true],
    ['.corp', 'a.b.kb.corp', true],
    ['corp', 'corp', true],
    ['.corp', 'corp', true],
    ['KB.Corp.', 'kb.corp', true],
    ['orp', 'kb.corp', false],
    ['kb.corp', 'corp', false],
    ['other.corp', 'kb.corp', false],
    // A list: commas separate entries, blanks around them are passed; as curl, a blank inside one ends the list.
    ['a.example, kb.corp', 'kb.corp', true],
    ['a.example ,\tkb.corp ', 'kb.corp', true],
    ['kb.corp other', 'kb.corp', true],
    ['a.example kb.corp', 'kb.corp', false],
    [',,a.example,,', 'kb.corp', false],
    // `*` alone: every host.
    ['*', 'kb.corp', true],
    ['*', '10.1.2.3', true],
    // IPv4: an address, or a CIDR range; a name never matches an address, curl resolves nothing.
    ['127.0.0.1', '127.0.0.1', true],
    ['127.0.0.0/8', '127.0.0.1', true],
    ['127.0.0.0/8', '127.255.0.9', true],
    ['127.0.0.0/8', '128.0.0.1', false],
    ['10.0.0.0/16', '10.0.255.1', true],
    ['10.0.0.0/16', '10.1.0.1', false],
    ['192.168.1.7/32', '192.168.1.7', true],
    ['localhost', '127.0.0.1', false],
    ['127.0.0.0/8', 'localhost', false],
    // IPv6, with or without brackets in the URL's host.
    ['::1', '[::1]', true],
    ['::1/128', '[::1]', true],
    ['fd00::/8', '[fd12:3456::1]', true],
    ['fd00::/8', '[fe80::1]', false],
    ['2001:db8::/32', '[2001:db8:ffff::1]', true],
    ['127.0.0.0/8', '[::1]', false],
    // As curl: a port in an entry is no part of what it reads, so it matches nothing.
    ['kb.corp:8080', 'kb.corp', false],
    ['', 'kb.corp', false],
  ])('NO_PROXY=%j for %s: %s', (noProxy, host, bypass) => {
    expect(noProxyMatches(noProxy, host)).toBe(bypass);
  });
});

describe('proxyFor: the proxy of a URL, as curl picks it', () => {
  const http = { url: 'http://h:1/', variable: 'http_proxy' };
  const https = { url: 'http://s:1/', variable: 'HTTPS_PROXY' };
  const all = { url: 'http://a:1/', variable: 'ALL_PROXY' };

  it('takes the scheme\'s own variable, then ALL_PROXY; an https URL never goes through HTTP_PROXY', () => {
    expect(proxyFor({ http, https, all }, 'http://kb.corp/v1/x')).toBe(http);
    expect(proxyFor({ http, https, all }, 'https://kb.corp/v1/x')).toBe(https);
    expect(proxyFor({ all }, 'http://kb.corp/v1/x')).toBe(all);
    expect(proxyFor({ http, all }, 'https://kb.corp/v1/x')).toBe(all);
    expect(proxyFor({ http }, 'https://kb.corp/v1/x')).toBeUndefined();
  });

  it('sends what NO_PROXY names directly', () => {
    expect(proxyFor({ http, noProxy: '127.0.0.0/8' }, 'http://127.0.0.1:3000/v1/x')).toBeUndefined();
    expect(proxyFor({ https, noProxy: '.corp' }, 'https://kb.corp/v1/x')).toBeUndefined();
    expect(proxyFor({ https, noProxy: '::1/128' }, 'https://[::1]:8443/v1/x')).toBeUndefined();
    expect(proxyFor({ https, noProxy: 'other' }, 'https://kb.corp/v1/x')).toBe(https);
  });
});

describe('shownProxyUrl', () => {
  it('never shows a password', () => {
    expect(shownProxyUrl('http://user:secret@proxy.corp:3128/')).toBe('http://user:***@proxy.corp:3128');
    expect(shownProxyUrl('http://proxy.corp:3128/')).toBe('http://proxy.corp:3128');
  });
});

describe('failedAtProxy: whose endpoint a connection failure names', () => {
  const proxy = { url: 'http://proxy.corp:3128/', variable: 'HTTPS_PROXY' };
  const refused = (address: string, port: number) => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', address, port });
  const notFound = (hostname: string) => Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND', hostname });

  it('refused at the proxy\'s port, or its host name not found: the proxy', () => {
    expect(failedAtProxy(proxy, 'https://kb.example.com/v1/ns_list', refused('10.0.0.5', 3128))).toBe(true);
    expect(failedAtProxy(proxy, 'https://kb.example.com/v1/ns_list', notFound('proxy.corp'))).toBe(true);
    // undici wraps some failures: the endpoint is found in the causes, or the first of an AggregateError.
    expect(failedAtProxy(proxy, 'https://kb.example.com/v1/ns_list', new Error('x', { cause: new AggregateError([refused('10.0.0.5', 3128)]) }))).toBe(true);
  });

  it('the deployment\'s own endpoint (NO_PROXY sent it directly), or nothing to tell by: not the proxy', () => {
    expect(failedAtProxy(proxy, 'https://kb.example.com/v1/ns_list', refused('10.0.0.9', 443))).toBe(false);
    expect(failedAtProxy(proxy, 'https://kb.example.com/v1/ns_list', notFound('kb.example.com'))).toBe(false);
    expect(failedAtProxy(proxy, 'https://kb.example.com/v1/ns_list', new Error('socket hang up'))).toBe(false);
    expect(failedAtProxy({ url: 'http://127.0.0.1:8080/', variable: 'HTTP_PROXY' }, 'http://127.0.0.1:8080/v1/health', refused('127.0.0.1', 8080))).toBe(false);
  });
});
