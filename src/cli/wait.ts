import { Flags } from '@oclif/core';
import type { KbClient } from '../client/client.js';
import { EXIT } from '../client/exit-codes.js';
import { parseTimeout } from './duration.js';
import { CliError } from './errors.js';
import type { IO } from './io.js';
import { escapeControls } from './text.js';

// kb wait ns|base (docs/contract.md, Live changes), as kubectl wait: the current state first (?initial=true), then
// the stream (src/cli/watch-stream.ts), or polling where the deployment does not serve it; exit 7 at --timeout.

export const DEFAULT_WAIT = '30s';

/** kb wait's own flags: its --timeout replaces the global one (how long to wait; requests keep $KB_TIMEOUT). */
export const waitFlags = {
  for: Flags.string({ summary: 'The condition: created (it exists) or deleted (it does not).', options: ['created', 'deleted'], default: 'created' }),
  timeout: Flags.string({
    summary: `How long to wait, e.g. 500ms, 30s or 2m (default ${DEFAULT_WAIT}); exit 7 when it did not hold by then. Each request keeps $KB_TIMEOUT.`,
  }),
};

export interface WaitTarget {
  /** `namespace docs` or `base docs/faq`, as the messages name it. */
  label: string;
  namespace: string;
  /** Undefined for the namespace itself. */
  base?: string | undefined;
}

/** Resolves once the target is there (`created`) or gone (`deleted`); throws exit 7 when `timeout` passes first. */
export async function waitFor(io: IO, client: KbClient, target: WaitTarget, condition: string, timeout: string | undefined): Promise<void> {
  const timeoutMs = parseTimeout(timeout ?? DEFAULT_WAIT, '--timeout');
  const { follow } = await import('./watch-stream.js');
  const stop = new AbortController();
  const wanted = condition === 'created';
  let held = false;
  const check = (state: { namespaces: Map<string, unknown>; bases: Map<string, unknown> }) => {
    const exists = target.base === undefined ? state.namespaces.has(target.namespace) : state.bases.has(`${target.namespace}/${target.base}`);
    if (exists === wanted) {
      held = true;
      stop.abort();
    }
  };
  const timer = setTimeout(() => stop.abort(), timeoutMs);
  try {
    await follow(client, { namespace: target.namespace, bases: target.base !== undefined }, {
      onSynced: check,
      onChange: (_change, state) => check(state),
      onNotice(text) {
        if (io.isStderrTTY) io.stderr(`${text}\n`);
      },
    }, stop.signal);
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
  const label = escapeControls(target.label);
  if (!held) {
    throw new CliError(
      `Timed out after ${timeout ?? DEFAULT_WAIT}: ${label} was not ${condition}`,
      EXIT.timedOut,
      'Give it longer with --timeout, e.g. --timeout 2m.',
    );
  }
  io.stderr(`${label} ${wanted ? 'exists' : 'does not exist'}\n`);
}
