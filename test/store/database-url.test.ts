import { describe, expect, it } from 'vitest';
import { maskDatabaseUrl, redactPassword } from '../../src/store/database-url.js';

describe('a database URL, as it may be shown', () => {
  it.each([
    ['postgres://u:secret@127.0.0.1:1/x', 'postgres://u:***@127.0.0.1:1/x'],
    ['postgresql://kb:p%40ss%2Fword@db.internal:5432/kb?sslmode=require', 'postgresql://kb:***@db.internal:5432/kb?sslmode=require'],
    ['postgres://u:a@b@h/x', 'postgres://u:***@h/x'],
    ['postgres://kb@db/kb?password=secret&sslmode=verify-full', 'postgres://kb@db/kb?password=***&sslmode=verify-full'],
    ['postgres://db.internal/kb', 'postgres://db.internal/kb'],
    ['postgres://u@[::1]:5433/kb', 'postgres://u@[::1]:5433/kb'],
    ['postgres://u:secret@[bad', 'postgres://***'],
    ['secret', '***'],
  ])('shows %s as %s', (url, shown) => {
    expect(maskDatabaseUrl(url)).toBe(shown);
    expect(maskDatabaseUrl(url)).not.toContain('secret');
  });

  it('removes the password, raw or percent-decoded, from any text', () => {
    const url = 'postgres://kb:p%40ss%2Fword@db/kb';
    expect(redactPassword('failed for kb with p@ss/word and p%40ss%2Fword', url)).toBe('failed for kb with *** and ***');
    expect(redactPassword('nothing to hide', 'postgres://db/kb')).toBe('nothing to hide');
  });
});
