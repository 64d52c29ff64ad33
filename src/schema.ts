/**
 * The executable schema: an Apollo Federation v2 subgraph built from the SDL of `schema/`
 * (one file per area), with the cost model's `@cost` and `@listSize` directives
 * (src/resolvers/cost-directives.ts), and each area's resolvers.
 */
import { readFileSync } from 'node:fs';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { graphqlSync, parse, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Resolvers } from './__generated__/resolvers-types.js';
import type { GraphQLContext } from './context.js';
import { projectFile } from './project-files.js';
import { withCostDirectives } from './resolvers/cost-directives.js';
import { inventoryResolvers } from './resolvers/inventory.js';
import { orderResolvers } from './resolvers/orders.js';
import { petResolvers } from './resolvers/pets.js';
import { plantResolvers } from './resolvers/plants.js';
import { scalarResolvers } from './resolvers/scalars.js';
import { userResolvers } from './resolvers/users.js';

/** Each area: its SDL file in `schema/` and its resolvers. */
const AREAS: readonly (readonly [file: string, resolvers: Resolvers])[] = [
  ['base.graphql', scalarResolvers],
  ['pets.graphql', petResolvers],
  ['orders.graphql', orderResolvers],
  ['inventory.graphql', inventoryResolvers],
  ['users.graphql', userResolvers],
  ['plants.graphql', plantResolvers],
];

/** Builds the executable subgraph schema. */
export function createSchema(): GraphQLSchema {
  const typeDefs = withCostDirectives(
    AREAS.map(([file]) => parse(readFileSync(projectFile(`schema/${file}`), 'utf8'))),
  );
  return buildSubgraphSchema(
    AREAS.map(([, resolvers], index) => ({
      typeDefs: typeDefs[index] as DocumentNode,
      // The generated resolver types are stricter than @apollo/subgraph's loose resolver map.
      resolvers: resolvers as GraphQLResolverMap<GraphQLContext>,
    })),
  );
}

/**
 * The subgraph SDL for a schema registry: exactly what the running server answers to
 * `{ _service { sdl } }`, because it is that query's answer.
 */
export function printSubgraphSdl(schema: GraphQLSchema = createSchema()): string {
  const result = graphqlSync({ schema, source: '{ _service { sdl } }' });
  const sdl = (result.data?.['_service'] as { sdl?: unknown } | undefined)?.sdl;
  if (typeof sdl !== 'string') throw new Error('the schema does not answer _service { sdl }');
  return sdl;
}
