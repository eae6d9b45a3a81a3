// What a robots.txt token may be: the product token an operator documents for robots.txt, or the
// one its crawler sends; never a hostname, a URL, regular-expression syntax or a version. Shared
// by catalog validation and the robots.txt renderer, so neither can let such a token through.

/**
 * Documented tokens that break a rule below, each with the reason it is kept. Reviewed by hand:
 * an entry needs the operator's own documentation naming the token for robots.txt.
 */
export const ROBOTS_TOKEN_EXCEPTIONS: Readonly<Record<string, string>> = {};

const EXCEPTIONS = new Set(Object.keys(ROBOTS_TOKEN_EXCEPTIONS));

// A product token built on its operator's domain, a name after it (`bnf.fr_bot`, `bl.uk_lddc_bot`,
// `Kukei.eu-Bot`): the crawler sends it and matches robots.txt groups against it, so it is written
// as sent. Cut to `bnf_bot`, it named no crawler under any parser. A bare host is still refused.
const DOMAIN_NAMED = /^[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\.[A-Za-z]{2,}[_-][A-Za-z][A-Za-z0-9_-]*$/;

/**
 * Why a value cannot be a robots token, or undefined when it can. Letters, digits, "_", "-", "!",
 * "'" and single inner spaces are accepted: RFC 9309 §2.2.1 allows letters, "_" and "-", and
 * crawlers send and operators document the rest (MJ12bot, "Y!J-BRW", "Screaming Frog SEO Spider").
 * @example
 * robotsTokenProblem('GPTBot'); // undefined
 * robotsTokenProblem('www.pinterest.com'); // 'a hostname'
 */
export function robotsTokenProblem(token: string): string | undefined {
  if (EXCEPTIONS.has(token) || DOMAIN_NAMED.test(token)) return undefined;
  if (token === '' || token.trim() !== token || / {2}/.test(token)) return 'blank, padded or with repeated spaces';
  if (/^www\.|^[a-z][a-z0-9+.-]*:\/\//i.test(token)) return 'a URL';
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029#:]/.test(token)) return 'a control character, "#" or ":"';
  if (/[\\^$*+?()[\]{}|]/.test(token)) return 'regular-expression syntax';
  if (/\d[._]\d|\/\s*v?\d|[ _-]v?\d+(?:\.\d+)*$/i.test(token)) return 'a version';
  if (/[A-Za-z0-9-]\.[A-Za-z]{2,}\b/.test(token)) return 'a hostname';
  if (/[./]/.test(token)) return 'a "." or "/"';
  // A pattern's separator kept by mistake ("Nitro-", "monitis -"): no crawler's name ends in one.
  if (/^[_!'-]|[_!'-]$|(?:^| )[_!'-]+(?: |$)/.test(token)) return 'a leading or trailing "-", "_", "!" or "\'"';
  if (!/^[A-Za-z0-9_!'-]+(?: [A-Za-z0-9_!'-]+)*$/.test(token)) return 'a character other than letters, digits, "_", "-", "!", "\'" and inner spaces';
  return undefined;
}
