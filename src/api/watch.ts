import { Key } from './schemas.js';
import * as z from './zod.js';

// GET /v1/watch, kb serve's extension (docs/contract.md, Live changes): its query, and its events' data.

export const WATCH_PATH = '/watch';

/** The response header of a stream: the cursor its first change follows. */
export const WATCH_CURSOR_HEADER = 'kb-watch-cursor';

/** A cursor as the server writes it: the change's number within its organization. */
export const CURSOR_PATTERN = /^\d{1,15}$/;
export const Cursor = z.string({ error: 'must be a cursor (an id of an event of this stream)' }).check(
  z.regex(CURSOR_PATTERN, { error: 'must be a cursor (an id of an event of this stream)' }),
);

export const WatchQuery = z.strictObject({
  namespace: z.optional(Key),
  since: z.optional(Cursor),
  initial: z.optional(z.enum(['true', 'false'])),
});
export type WatchQuery = z.infer<typeof WatchQuery>;

/** The data of an `event: change`. */
export interface WatchChange {
  type: 'created' | 'updated' | 'deleted';
  kind: 'namespace' | 'base';
  object: { key: string; namespace?: string; description: string | null };
}
