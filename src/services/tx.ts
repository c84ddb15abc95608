import type { PrismaClient } from '../generated/prisma/client';
import type { RawQueryable } from './content-store';

export type Tx = RawQueryable;

/** Deadlocks and lock-wait timeouts are the database's way of saying "try again". */
export function isRetryableTxError(err: unknown): boolean {
  let e: any = err;
  for (let i = 0; e && i < 5; i++, e = e.cause) {
    const text = `${e.code ?? ''} ${e.errno ?? ''} ${e.message ?? ''}`;
    if (/P2034|1213|1205|\bdeadlock|lock wait timeout|write conflict/i.test(text)) return true;
    if (e.meta && /1213|1205|deadlock/i.test(JSON.stringify(e.meta))) return true;
  }
  return false;
}

/** Runs `fn` in an interactive transaction, retrying a few times on deadlock. */
export async function inTransaction<T>(prisma: PrismaClient, fn: (tx: Tx) => Promise<T>, attempts = 8): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await prisma.$transaction((tx) => fn(tx as unknown as Tx), { maxWait: 10_000, timeout: 120_000 });
    } catch (err) {
      if (attempt >= attempts || !isRetryableTxError(err)) throw err;
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }
}
