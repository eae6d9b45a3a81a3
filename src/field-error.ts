// Field-level validation errors and the RFC 6901 JSON pointers that locate them: shared by visit
// parsing (visits/) and problem+json bodies (api/), below both.

/** One field-level error: where (RFC 6901 JSON pointer into the request body), which rule, and why. */
export interface FieldError {
  readonly pointer: string;
  /** The query parameter at fault, for errors outside the body (pointer is then ''). */
  readonly parameter?: string;
  /** The request header at fault, for errors outside the body (pointer is then ''). */
  readonly header?: string;
  readonly code: string;
  readonly message: string;
}

/** Appends one reference token to a JSON pointer, escaping `~` and `/` (RFC 6901 §3). */
export function pointerTo(parent: string, token: string | number): string {
  if (typeof token === 'number') return `${parent}/${token}`;
  const text = token.includes('~') || token.includes('/') ? token.replace(/~/g, '~0').replace(/\//g, '~1') : token;
  return `${parent}/${text}`;
}
