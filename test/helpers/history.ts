export type Op = {
  kind: 'create' | 'delete' | 'update';
  key: string;
  value?: string;
  acked: boolean;
  /** The request as sent, and its Idempotency-Key when it had one: a keyed write can be repeated later. */
  request?: { method: string; path: string; body: unknown; idempotencyKey?: string | undefined };
};

/**
 * A Jepsen-style check of a recorded history against the final state. Each writer owns its keys and runs one
 * operation at a time, so per key the history is sequential; an operation that was not acknowledged may or may
 * not have happened.
 */
export function check(history: Op[], stored: Map<string, string | null>): string[] {
  const problems: string[] = [];
  const byKey = new Map<string, Op[]>();
  for (const op of history) byKey.set(op.key, [...(byKey.get(op.key) ?? []), op]);
  for (const [key, ops] of byKey) {
    const created = ops.find((op) => op.kind === 'create');
    const deletion = ops.find((op) => op.kind === 'delete');
    if (deletion?.acked && stored.has(key)) problems.push(`${key}: acknowledged delete, still present`);
    if (created?.acked && !deletion && !stored.has(key)) problems.push(`${key}: acknowledged create, missing`);
    if (!stored.has(key) || deletion) continue;
    // The description is the last acknowledged update's, or that of an unacknowledged update attempted after it.
    const updates = ops.filter((op) => op.kind === 'update');
    const lastAcked = updates.map((op) => op.acked).lastIndexOf(true);
    const allowed = new Set(updates.slice(lastAcked === -1 ? 0 : lastAcked).map((op) => op.value ?? null));
    if (lastAcked === -1) allowed.add(null);
    if (!allowed.has(stored.get(key) ?? null)) problems.push(`${key}: description ${stored.get(key)} not in ${[...allowed].join(', ')}`);
  }
  return problems;
}


/**
 * Sends one write, with an Idempotency-Key when one is given (as the CLI sends every write); resolves to whether it
 * was acknowledged (a 200), false on any failure, even a dropped connection.
 */
export async function acknowledged(url: string, token: string, method: string, path: string, body: unknown, idempotencyKey?: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }),
      },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}
