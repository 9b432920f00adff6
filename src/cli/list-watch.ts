import type { WatchChange } from '../api/watch.js';
import type { KbClient } from '../client/client.js';
import { UsageError } from './errors.js';
import type { IO } from './io.js';
import { changeJson, changeLine, follow, type FollowScope, type WatchedState } from './watch-stream.js';

// `kb ns list --watch` and `kb base list NS --watch` (docs/contract.md, Live changes), as kubectl's `get -w`: the list,
// then each change in it, through the one stream module (src/cli/watch-stream.ts). Loaded with --watch only.

export interface ListWatch<T> {
  scope: FollowScope;
  kind: WatchChange['kind'];
  /** The list out of the state, as the list command orders it. */
  items(state: WatchedState): T[];
  /** The list as the command prints it (a table); an empty list says `empty` on stderr instead. */
  table(items: T[]): string;
  empty: string;
  json: boolean;
}

/** --query, --jq and -o yaml pick from one result: a list that goes on has none. */
export function checkWatchFlags(flags: { query?: string | undefined; jq?: string | undefined; output?: string | undefined }, command: string): void {
  const other = flags.query !== undefined ? '--query' : flags.jq !== undefined ? '--jq' : flags.output === 'yaml' ? '-o yaml' : undefined;
  if (other !== undefined) {
    throw new UsageError(`${other} cannot be used with --watch`, `--watch --json prints the list as one line, then each change as one JSON object a line (NDJSON), for jq -c or a script. See \`kb ${command} --help\`.`);
  }
}

/** Prints the list, then each change in it as a line (`created namespace docs`) or NDJSON, until Ctrl-C. */
export async function watchList<T>(io: IO, client: KbClient, watch: ListWatch<T>): Promise<void> {
  await follow(client, watch.scope, {
    onSynced(state) {
      const items = watch.items(state);
      if (watch.json) io.stdout(`${JSON.stringify(items)}\n`);
      else if (items.length === 0) io.stderr(`${watch.empty}\n`);
      else io.stdout(watch.table(items));
    },
    onChange(change) {
      if (change.kind !== watch.kind) return;
      io.stdout(watch.json ? changeJson(change) : changeLine(change));
    },
    onNotice(text) {
      if (io.isStderrTTY) io.stderr(`${text}\n`);
    },
  }, new AbortController().signal);
}

/** Orders by key, as the lists do. */
export function byKey<T extends { key: string }>(items: Iterable<T>): T[] {
  return [...items].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
