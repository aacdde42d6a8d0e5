/**
 * Virtual time for a run: the globals production code reads time and schedules work through (`setTimeout`,
 * `clearTimeout`, `setInterval`, `clearInterval`, `Date`, `performance.now`, `AbortSignal.timeout`, `Math.random`,
 * `crypto`) are replaced by the scheduler's for the run and restored after. ky 2 and the transport look these up
 * globally at call time, so the real `CollectionsClient` runs unchanged.
 *
 * The escape guard: production code that reaches real time anyway (`setImmediate`, `process.hrtime`, a clock read
 * while no simulated step runs, i.e. from a real timer's callback) is a violation naming the stack. A real timer
 * captured before the run never fires inside it; the process it belongs to then never finishes, which the runner
 * reports as stuck.
 *
 * No vitest import (see scheduler.ts).
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import timers from 'node:timers';
import timersPromises from 'node:timers/promises';
import { type Proc, type Scheduler, T0, type Timer } from './scheduler.js';

/** A timer handle as Node's: production code calls `unref()` on some. */
class VirtualHandle {
  timer: Timer | undefined;
  readonly repeat: number | undefined;
  constructor(repeat: number | undefined) {
    this.repeat = repeat;
  }
  unref(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  hasRef(): boolean {
    return true;
  }
  [Symbol.toPrimitive](): number {
    return this.timer?.seq ?? -1;
  }
}

interface Saved {
  readonly target: object;
  readonly key: PropertyKey;
  readonly descriptor: PropertyDescriptor | undefined;
}

/** Installs virtual time on the globals; `restore()` puts the real ones back. */
export class VirtualTime {
  readonly #sim: Scheduler;
  readonly #random: () => number;
  readonly #saved: Saved[] = [];
  /** Escapes from virtual time, each with the stack that made it. */
  readonly escapes: string[] = [];

  constructor(sim: Scheduler, random: () => number) {
    this.#sim = sim;
    this.#random = random;
  }

  /** The clock of the process running now (true time between steps). */
  readonly clock = (): number => {
    if (!this.#sim.inStep) this.#escape('a clock read outside a simulated step (a real timer or I/O callback)');
    return this.#sim.clockOf(this.#sim.current);
  };

  #escape(what: string): void {
    if (this.escapes.length >= 5) return;
    const stack = (new Error().stack ?? '').split('\n').slice(3, 9).join(' | ');
    this.escapes.push(`${what}: ${stack}`);
  }

  readonly setTimeout = (fire: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): VirtualHandle => {
    const handle = new VirtualHandle(undefined);
    this.#arm(handle, fire, ms, args, this.#sim.current);
    return handle;
  };

  readonly setInterval = (fire: (...args: unknown[]) => void, ms?: number, ...args: unknown[]): VirtualHandle => {
    const handle = new VirtualHandle(Math.max(1, Number(ms) || 1));
    this.#arm(handle, fire, ms, args, this.#sim.current);
    return handle;
  };

  readonly clearTimeout = (handle: unknown): void => {
    if (handle instanceof VirtualHandle && handle.timer !== undefined) {
      handle.timer.cancelled = true;
      handle.timer = undefined;
    }
  };

  #arm(handle: VirtualHandle, fire: (...args: unknown[]) => void, ms: number | undefined, args: unknown[], proc: Proc | undefined): void {
    const delay = Math.max(1, Math.min(Number(ms) || 0, 2 ** 31 - 1));
    handle.timer = this.#sim.at(this.#sim.now + delay, proc, 'timer', () => {
      if (handle.repeat !== undefined) this.#arm(handle, fire, handle.repeat, args, proc);
      else handle.timer = undefined;
      fire(...args);
    });
  }

  /** Replaces the globals for the run. */
  install(): void {
    const clock = this.clock;
    const RealDate = Date;
    // new Date() and Date.now() read the current process's clock; every other form is the real Date's.
    class VirtualDate extends RealDate {
      constructor(...args: unknown[]) {
        if (args.length === 0) super(clock());
        else super(...(args as [number]));
      }
      static override now(): number {
        return clock();
      }
    }
    const sim = this.#sim;
    const random = this.#random;
    const set = (target: object, key: PropertyKey, value: unknown) => {
      this.#saved.push({ target, key, descriptor: Object.getOwnPropertyDescriptor(target, key) });
      Object.defineProperty(target, key, { value, configurable: true, writable: true, enumerable: false });
    };
    set(globalThis, 'setTimeout', this.setTimeout);
    set(globalThis, 'setInterval', this.setInterval);
    set(globalThis, 'clearTimeout', this.clearTimeout);
    set(globalThis, 'clearInterval', this.clearTimeout);
    set(globalThis, 'Date', VirtualDate);
    set(globalThis.performance, 'now', () => {
      if (!sim.inStep) this.#escape('performance.now() outside a simulated step');
      return sim.now - T0;
    });
    set(AbortSignal, 'timeout', (ms: number) => {
      const controller = new AbortController();
      this.setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
      return controller.signal;
    });
    set(Math, 'random', random);
    set(globalThis, 'crypto', {
      subtle: syncSubtle,
      getRandomValues: <T extends ArrayBufferView>(array: T): T => {
        const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
        for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
        return array;
      },
      randomUUID: () => seededUuid(random),
    });
    // Escapes: the scheduler's own hand-over uses the real setImmediate it imported; anyone else's is reported.
    const trap =
      (what: string) =>
      (fire: (...args: unknown[]) => void, ...args: unknown[]) => {
        this.#escape(what);
        return this.setTimeout(fire, 0, ...args);
      };
    set(globalThis, 'setImmediate', trap('setImmediate'));
    set(
      process,
      'hrtime',
      Object.assign(
        () => {
          this.#escape('process.hrtime()');
          return [0, 0];
        },
        {
          bigint: () => {
            this.#escape('process.hrtime.bigint()');
            return 0n;
          },
        },
      ),
    );
    // node:timers imported by name: the same virtual timers (syncBuiltinESMExports updates ESM named imports).
    set(timers, 'setTimeout', this.setTimeout);
    set(timers, 'setInterval', this.setInterval);
    set(timers, 'clearTimeout', this.clearTimeout);
    set(timers, 'clearInterval', this.clearTimeout);
    set(timers, 'setImmediate', trap('node:timers setImmediate'));
    set(timersPromises, 'setTimeout', (ms: number, value?: unknown) => new Promise((resolve) => this.setTimeout(() => resolve(value), ms)));
    syncBuiltinESMExports();
  }

  restore(): void {
    for (const { target, key, descriptor } of this.#saved.reverse()) {
      if (descriptor === undefined) Reflect.deleteProperty(target, key);
      else Object.defineProperty(target, key, descriptor);
    }
    this.#saved.length = 0;
    syncBuiltinESMExports();
  }
}

/** AES-GCM as Web Crypto frames it: the ciphertext, then the 16-byte tag. */
interface GcmParams {
  readonly iv: Uint8Array;
  readonly additionalData?: Uint8Array;
}

/**
 * Deterministic Web Crypto: the fingerprint's HMAC, computed at once (the real one resolves on a thread pool,
 * outside any step).
 */
const syncSubtle = {
  importKey: (_format: string, key: Uint8Array) => Promise.resolve({ key: Buffer.from(key) }),
  sign: (_algorithm: unknown, key: { key: Buffer }, data: Uint8Array) =>
    Promise.resolve(new Uint8Array(createHmac('sha256', key.key).update(data).digest()).buffer),
  // The sealed number of `duplicateReferences: 'refused'`: HKDF-SHA-256 to a 256-bit AES-GCM key.
  deriveKey: (params: { salt: Uint8Array; info: Uint8Array }, base: { key: Buffer }) =>
    Promise.resolve({ key: Buffer.from(hkdfSync('sha256', base.key, params.salt, params.info, 32)) }),
  encrypt: (params: GcmParams, key: { key: Buffer }, data: Uint8Array) => {
    const cipher = createCipheriv('aes-256-gcm', key.key, params.iv);
    if (params.additionalData !== undefined) cipher.setAAD(params.additionalData);
    const sealed = Buffer.concat([cipher.update(data), cipher.final(), cipher.getAuthTag()]);
    return Promise.resolve(new Uint8Array(sealed).buffer);
  },
  decrypt: (params: GcmParams, key: { key: Buffer }, data: Uint8Array) => {
    try {
      const bytes = Buffer.from(data);
      const decipher = createDecipheriv('aes-256-gcm', key.key, params.iv);
      if (params.additionalData !== undefined) decipher.setAAD(params.additionalData);
      decipher.setAuthTag(bytes.subarray(bytes.length - 16));
      return Promise.resolve(
        new Uint8Array(Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - 16)), decipher.final()])).buffer,
      );
    } catch (error) {
      return Promise.reject(error);
    }
  },
};

/** A UUID v4 drawn from the seed. */
export function seededUuid(random: () => number): string {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(random() * 16).toString(16)).join('');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;
}
