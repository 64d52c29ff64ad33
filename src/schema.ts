/**
 * The executable schema: the SDL files of `schema/` (one per area) with the resolvers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { makeExecutableSchema } from '@graphql-tools/schema';
import type { GraphQLSchema } from 'graphql';
import { resolvers } from './resolvers/index.js';

const SCHEMA_DIR = new URL('../schema/', import.meta.url);

/** The SDL of every area, base first. */
export function loadTypeDefs(): string[] {
  const files = readdirSync(SCHEMA_DIR).filter((name) => name.endsWith('.graphql')).sort((a, b) => (a === 'base.graphql' ? -1 : b === 'base.graphql' ? 1 : a.localeCompare(b)));
  return files.map((name) => readFileSync(new URL(name, SCHEMA_DIR), 'utf8'));
}

/** Builds the executable schema. */
export function createSchema(): GraphQLSchema {
  return makeExecutableSchema({ typeDefs: loadTypeDefs(), resolvers });
}
