import type { Base, Namespace } from '../api/schemas.js';
import type { IO } from './io.js';
import { renderObject, renderTable } from './output.js';

/** -o wide: every column, and nothing cut to the terminal's width (as a pipe gets it). */
function widthOf(io: IO, wide: boolean): Pick<IO, 'columns'> {
  return wide ? { columns: undefined } : io;
}

export function namespaceTable(io: IO, namespaces: readonly Namespace[], wide = false): string {
  return renderTable(widthOf(io, wide), namespaces, [
    { header: 'KEY', get: (ns) => ns.key },
    { header: 'DESCRIPTION', get: (ns) => ns.description ?? '' },
  ]);
}

/** Bases of one namespace; with `namespaces` (kb base list -A, or -o wide), each base's namespace in a column of its own. */
export function baseTable(io: IO, bases: readonly Base[], options: { wide?: boolean; namespaces?: boolean } = {}): string {
  const wide = options.wide === true;
  return renderTable(widthOf(io, wide), bases, [
    ...(wide || options.namespaces === true ? [{ header: 'NAMESPACE', get: (base: Base) => base.namespace }] : []),
    { header: 'KEY', get: (base) => base.key },
    { header: 'DESCRIPTION', get: (base) => base.description ?? '' },
  ]);
}

export function namespaceBlock(ns: Namespace): string {
  return renderObject({ key: ns.key, description: ns.description });
}

export function baseBlock(base: Base): string {
  return renderObject({ namespace: base.namespace, key: base.key, description: base.description });
}
