import { describe, expect, it } from 'vitest';
import { KbApiError } from '../../src/api/errors.js';
import {
  ApiError,
  BaseListUnsupportedError,
  ClientOptionsError,
  exitCodeFor,
  KbClientError,
  NetworkError,
  NsDeleteUnsupportedError,
  ResponseFormatError,
} from '../../src/client/index.js';

const apiError = (status: number) => new ApiError({ status, message: 'm', url: 'http://x/v1/ns_list', method: 'GET' });

describe('exitCodeFor, the exit code table of docs/contract.md', () => {
  it('is 0 when there is no error', () => {
    expect(exitCodeFor(undefined)).toBe(0);
    expect(exitCodeFor(null)).toBe(0);
  });

  it.each([
    [400, 2], [401, 4], [403, 4], [404, 3], [405, 2], [409, 5], [413, 2], [415, 2], [422, 2],
    [429, 1], [500, 1], [502, 1], [503, 1], [504, 1], [507, 1],
  ])('maps an ApiError with status %i to %i', (status, code) => {
    expect(exitCodeFor(apiError(status))).toBe(code);
  });

  it('maps every network failure to 6', () => {
    for (const kind of ['refused', 'dns', 'timeout', 'tls', 'reset', 'other'] as const) {
      expect(exitCodeFor(new NetworkError(kind, 'http://x/v1/health', 'GET', 'why'))).toBe(6);
    }
  });

  it('maps a malformed 200 reply to 1, and a malformed error reply by its status', () => {
    expect(exitCodeFor(new ResponseFormatError('http://x', 'GET', 200, 'html'))).toBe(1);
    expect(exitCodeFor(new ResponseFormatError('http://x', 'GET', 401, 'html'))).toBe(4);
    expect(exitCodeFor(new ResponseFormatError('http://x', 'GET', 502, 'html'))).toBe(1);
  });

  it('maps a missing base_list extension to 1, a missing ns_delete extension and bad client options to 2', () => {
    expect(exitCodeFor(new BaseListUnsupportedError('http://x', 'docs'))).toBe(2);
    expect(exitCodeFor(new NsDeleteUnsupportedError('http://x', 'docs'))).toBe(2);
    expect(exitCodeFor(new ClientOptionsError('bad url'))).toBe(2);
  });

  it('maps a KbApiError raised locally through src/api by its status', () => {
    expect(exitCodeFor(new KbApiError('bad_request', 'Invalid request body'))).toBe(2);
    expect(exitCodeFor(new KbApiError('conflict', 'taken'))).toBe(5);
  });

  it('uses the exitCode an error carries (the CLI\'s usage errors, the config errors)', () => {
    expect(exitCodeFor(Object.assign(new Error('needs --yes'), { exitCode: 2 }))).toBe(2);
    expect(exitCodeFor(Object.assign(new Error('no deployment'), { exitCode: 4 }))).toBe(4);
  });

  it('ignores an exitCode that is not a whole number from 0 to 255, and maps anything else to 1', () => {
    expect(exitCodeFor(Object.assign(new Error('x'), { exitCode: '2' }))).toBe(1);
    expect(exitCodeFor(Object.assign(new Error('x'), { exitCode: 2.5 }))).toBe(1);
    expect(exitCodeFor(Object.assign(new Error('x'), { exitCode: 300 }))).toBe(1);
    expect(exitCodeFor(new Error('boom'))).toBe(1);
    expect(exitCodeFor(new TypeError('boom'))).toBe(1);
    expect(exitCodeFor('a string')).toBe(1);
  });
});

describe('the client error catalog', () => {
  it('gives each class its name, a stable code and the KbClientError base', () => {
    const errors: Array<[KbClientError, string, string]> = [
      [apiError(409), 'ApiError', 'conflict'],
      [new NetworkError('refused', 'http://x', 'GET', 'connection refused'), 'NetworkError', 'network_error'],
      [new ResponseFormatError('http://x', 'GET', 200, 'html'), 'ResponseFormatError', 'bad_response'],
      [new BaseListUnsupportedError('http://x', 'docs'), 'BaseListUnsupportedError', 'base_list_unsupported'],
      [new NsDeleteUnsupportedError('http://x', 'docs'), 'NsDeleteUnsupportedError', 'ns_delete_unsupported'],
      [new ClientOptionsError('x'), 'ClientOptionsError', 'invalid_client_options'],
    ];
    for (const [error, name, code] of errors) {
      expect(error).toBeInstanceOf(KbClientError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(error.code).toBe(code);
    }
  });

  it('takes an ApiError\'s code from the status through the src/api catalog', () => {
    expect([400, 401, 404, 409, 413, 415, 422, 429, 500, 503].map((status) => apiError(status).code)).toEqual([
      'bad_request', 'unauthorized', 'not_found', 'conflict', 'payload_too_large', 'unsupported_media_type',
      'idempotency_mismatch', 'rate_limited', 'internal', 'unavailable',
    ]);
  });

  it('keeps the envelope\'s help, and leaves it undefined when the server gave none', () => {
    expect(new ApiError({ status: 400, message: 'm', help: 'Allowed fields: key.', url: 'u', method: 'POST' }).help).toBe('Allowed fields: key.');
    expect(apiError(400).help).toBeUndefined();
  });
});
