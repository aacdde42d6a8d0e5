/**
 * tap-collections-sdk/testing: the simulator of both services, for partners' own tests.
 *
 * @packageDocumentation
 */
export {};
