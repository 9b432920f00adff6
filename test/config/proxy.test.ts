import { describe, expect, it } from 'vitest';
import { failedAtProxy, shownProxyUrl } from '../../src/client/proxy.js';
import { ConfigError } from '../../src/config/errors.js';
import { proxySettings, proxyUrl } from '../../src/config/proxy.js';

describe('proxyUrl: a proxy variable as undici takes it, checked before anything is sent', () => {
  it.each([
    ['http://proxy.corp:3128', 'http://proxy.corp:3128/'],
    ['https://proxy.corp', 'https://proxy.corp/'],
    // As curl takes them: no scheme means http://.
    ['proxy.corp:3128', 'http://proxy.corp:3128/'],
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
