import type { Base, Namespace } from '../api/schemas.js';
import type { IO } from './io.js';
import { renderObject, renderTable } from './output.js';

export function namespaceTable(io: IO, namespaces: readonly Namespace[]): string {
  return renderTable(io, namespaces, [
    { header: 'KEY', get: (ns) => ns.key },
    { header: 'DESCRIPTION', get: (ns) => ns.description ?? '' },
  ]);
}

export function baseTable(io: IO, bases: readonly Base[]): string {
  return renderTable(io, bases, [
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
