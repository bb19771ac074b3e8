import { isLoopbackHost, LOOPBACK_HOSTS } from './loopback.js';

/**
 * What is wrong with an `api.baseUrl`, one message per problem (without the key, which the
 * caller adds); empty when it is fine. The config schema and the API client both ask this, so
 * `porter check` and `porter run` accept exactly the same URLs. Values are not echoed beyond the
 * host: the user part of a URL may hold a password.
 */
export function baseUrlProblems(baseUrl: string): string[] {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return ['expected an http(s) URL such as https://seller.example.com'];
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return ['expected an http(s) URL such as https://seller.example.com'];
  const problems: string[] = [];
  if (url.username !== '' || url.password !== '') {
    problems.push('must not contain a user name or password; the API token goes in api.token, api.tokenFile or PORTER_API_TOKEN');
  }
  // The token travels in a header, so a non-loopback http:// would send it over the network in clear.
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    problems.push(
      `plain http:// to ${url.hostname} would send the API token unencrypted; use https:// (http:// is only allowed to loopback: ${LOOPBACK_HOSTS})`,
    );
  }
  if (url.search !== '' || url.hash !== '') {
    problems.push('must not contain a query string or fragment; give the scheme, host and an optional path prefix only');
  }
  return problems;
}
