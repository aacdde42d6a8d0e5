/**
 * A queue of items ordered by the time they are due: a binary min-heap, O(log n) to add or take, O(1) to
 * see the next due time. One queue and one timer serve any number of waiting items, so a waiting item
 * costs an array slot, not a timer and a promise.
 *
 * @module
 */

/** An item of a {@link DueQueue}: the queue reads and orders by `dueAt`. */
export interface DueItem {
  /** When the item is due, in the clock's milliseconds. */
  dueAt: number;
}

/** Items by due time, earliest first; items due at the same time leave in no set order. */
export class DueQueue<T extends DueItem> {
  readonly #heap: T[] = [];

  /** How many items wait. */
  get size(): number {
    return this.#heap.length;
  }

  /** The earliest item, left in place; `undefined` when empty. */
  peek(): T | undefined {
    return this.#heap[0];
  }

  /** Adds `item` (at its current `dueAt`; change `dueAt` only while the item is out of the queue). */
  push(item: T): void {
    const heap = this.#heap;
    heap.push(item);
    let index = heap.length - 1;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if ((heap[parent] as T).dueAt <= item.dueAt) break;
      heap[index] = heap[parent] as T;
      index = parent;
    }
    heap[index] = item;
  }

  /** Removes and returns the earliest item; `undefined` when empty. */
  pop(): T | undefined {
    const heap = this.#heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length === 0 || last === undefined) return top;
    let index = 0;
    const length = heap.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= length) break;
      const right = left + 1;
      const child = right < length && (heap[right] as T).dueAt < (heap[left] as T).dueAt ? right : left;
      if ((heap[child] as T).dueAt >= last.dueAt) break;
      heap[index] = heap[child] as T;
      index = child;
    }
    heap[index] = last;
    return top;
  }

  /** Removes every item. */
  clear(): void {
    this.#heap.length = 0;
  }
}
