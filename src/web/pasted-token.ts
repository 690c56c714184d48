/**
 * The admin token as an operator pastes it into the sign-in form (docs/reference.md#dashboard): bare, with a leading
 * `Bearer ` in any case (RFC 9110 section 11.1: the scheme is case-insensitive), or as the whole `Authorization:` line
 * serve prints when it generates the token, with the spaces and line ends a copy from a terminal brings along. What is
 * left is compared with the token as it is; nothing else is guessed at, so a wrong token stays wrong.
 */
const HEADER = /^authorization[ \t]*:[ \t]*/i;
const SCHEME = /^bearer[ \t]+/i;

export function pastedToken(text: string): string {
  return text.trim().replace(HEADER, '').replace(SCHEME, '').trim();
}
