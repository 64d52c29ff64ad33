/** What the upstream cache keeps beside an answer, for tests that write to its store directly. */
import CachePolicy from 'http-cache-semantics';

/** A policy as the cache keeps one: an answer fresh for a minute. */
export function keptPolicy(): CachePolicy.CachePolicyObject {
  return new CachePolicy(
    { url: '/pet/1', method: 'GET', headers: {} },
    { status: 200, headers: { 'cache-control': 'max-age=60' } },
    { shared: true },
  ).toObject();
}
