/**
 * A preload (`node --import`) that makes this process's clock wrong, as a machine whose clock is off looks to
 * JavaScript: `Date.now()`, `new Date()` and `Date()` run `CLOCK_AHEAD_MS` (environment) ahead; timers are untouched.
 * The machine's clock stays readable under {@link MACHINE_NOW}, for a journal whose clock is the machine's.
 */

/** Where the preload keeps the machine's clock (a function returning epoch ms). */
export const MACHINE_NOW = Symbol.for('tap-collections-test.machineNow');

const aheadMs = Number(process.env.CLOCK_AHEAD_MS ?? 0);
if (aheadMs !== 0 && !(MACHINE_NOW in globalThis)) {
  const RealDate = Date;
  const machineNow = RealDate.now.bind(RealDate);
  (globalThis as Record<symbol, unknown>)[MACHINE_NOW] = machineNow;
  function SkewedDate(this: unknown, ...args: unknown[]): Date | string {
    if (!new.target) return new RealDate(machineNow() + aheadMs).toString();
    return args.length === 0 ? new RealDate(machineNow() + aheadMs) : new RealDate(...(args as [number]));
  }
  Object.setPrototypeOf(SkewedDate, RealDate);
  SkewedDate.prototype = RealDate.prototype;
  SkewedDate.now = () => machineNow() + aheadMs;
  globalThis.Date = SkewedDate as unknown as DateConstructor;
}
