import type { NewPaymentRecord, PaymentState } from '../../journal/journal.js';
import { expectEqual } from './expect.js';
import { ALL_STATES, BY, type Check, newRecord } from './kit.js';

/** `counts()` (optional): every state, moved by exactly what each write changed. */
export const COUNT_CHECKS: ReadonlyArray<readonly [string, Check]> = [
  [
    'counts() (optional) names every state and moves by exactly what each write changed',
    async ({ journal }) => {
      if (typeof journal.counts !== 'function') return;
      const counts = () => (journal.counts as () => Promise<Record<PaymentState, number>>)();
      const before = await counts();
      expectEqual(Object.keys(before).sort(), [...ALL_STATES].sort(), 'the states counts() names');
      const items = [newRecord(), newRecord(), newRecord()];
      for (const item of items) await journal.insert(item);
      await journal.insert(items[0] as NewPaymentRecord);
      const [pending, settled] = items as [NewPaymentRecord, NewPaymentRecord];
      await journal.transition(pending.referenceId, 1, { state: 'pending', by: BY });
      await journal.transition(settled.referenceId, 1, { state: 'successful', by: BY });
      // Refused: a stale version, and a final record.
      await journal.transition(pending.referenceId, 1, { state: 'unknown', by: BY });
      await journal.transition(settled.referenceId, 2, { state: 'failed', by: BY });
      const after = await counts();
      const moved = Object.fromEntries(ALL_STATES.map((state) => [state, (after[state] ?? 0) - (before[state] ?? 0)]));
      expectEqual(
        moved,
        { ...Object.fromEntries(ALL_STATES.map((state) => [state, 0])), initiating: 1, pending: 1, successful: 1 },
        'counts() after 3 inserts, a duplicate, 2 transitions and 2 refused ones (by state, after minus before)',
      );
    },
  ],
];
