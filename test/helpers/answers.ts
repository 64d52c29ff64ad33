/**
 * What tests read of an answer, in one place: the errors of a GraphQL answer as a test compares
 * them, and a gateway's /readiness.
 */
import type { GraphQLResponse } from './stack.js';

/** Each error of a result, without its locations: message, path and extensions. */
export function errorsOf(result: GraphQLResponse) {
  return result.errors?.map(({ message, path, extensions }) => ({ message, path, extensions }));
}

/** The extensions of each error of a result. */
export function extensionsOf(result: GraphQLResponse) {
  return result.errors?.map((error) => error.extensions);
}

/** A gateway's `/readiness` answer: its status, and its body. */
export type Readiness = {
  status: number;
  body: { status?: string; upstreams: Record<string, unknown>; [key: string]: unknown };
};

/** `GET /readiness` of the gateway at `origin`. */
export async function readinessOf(origin: string): Promise<Readiness> {
  const response = await fetch(`${origin}/readiness`);
  return { status: response.status, body: (await response.json()) as Readiness['body'] };
}
