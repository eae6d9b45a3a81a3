// HTTP tokens (RFC 9110 §5.6.2): what a field name and a method are made of. Shared by visit
// parsing, client-IP rules and access policies, below all three.
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Whether `text` is an HTTP token: a valid field name or method (`user-agent`, `GET`). */
export function isHttpToken(text: string): boolean {
  return TOKEN.test(text);
}
