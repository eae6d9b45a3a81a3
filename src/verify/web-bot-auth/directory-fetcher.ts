// The contract between the Web Bot Auth verifier (core) and whatever fetches key directories
// (the node adapter's SSRF-safe fetcher, a Worker's fetch, a test double).

/** Why a key directory could not be fetched. `refused-*` means our own rules said no. */
export type DirectoryFetchFailure =
  | 'refused-url' // not https, has credentials, odd port or host syntax
  | 'refused-address' // resolves to loopback, private, link-local, metadata... (checked at connect time)
  | 'redirect' // directories are fetched without following redirects
  | 'http-status' // non-2xx answer
  | 'too-large' // body over the size cap
  | 'timeout'
  | 'network';

/** A fetch failure with a closed reason code, thrown by a DirectoryFetcher. */
export class DirectoryFetchError extends Error {
  readonly code: DirectoryFetchFailure;
  constructor(code: DirectoryFetchFailure, message: string) {
    super(message);
    this.name = 'DirectoryFetchError';
    this.code = code;
  }
}

/** A fetched key directory response: status, headers (for Cache-Control, signatures) and raw body. */
export interface DirectoryResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Uint8Array;
}

/**
 * Fetches one key-directory URL. Implementations enforce their platform's safety rules and
 * throw DirectoryFetchError; they never follow redirects.
 */
export type DirectoryFetcher = (url: string, init: { readonly signal?: AbortSignal }) => Promise<DirectoryResponse>;
