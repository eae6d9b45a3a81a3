// Assertion helper for DirectoryFetcher tests: the closed failure code of a rejected fetch.
import { DirectoryFetchError, type DirectoryFetchFailure } from '../../src/index.js';

/** Resolves to the DirectoryFetchError code of a rejected fetch (fails the test on success or another error). */
export async function failureCode(promise: Promise<unknown>): Promise<DirectoryFetchFailure> {
  const error: unknown = await promise.then(
    () => new Error('fetch unexpectedly succeeded'),
    (e: unknown) => e,
  );
  if (!(error instanceof DirectoryFetchError)) throw error;
  return error.code;
}
