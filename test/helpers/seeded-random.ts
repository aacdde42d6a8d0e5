/**
 * A small seeded PRNG (mulberry32): the chaos soak, the fault tests and the benchmarks replay the same run for a seed.
 * No imports, so both vitest and the benchmarks (run by Node directly) load it as it is.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
