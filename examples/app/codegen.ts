/**
 * GraphQL Code Generator's client preset over the gateway's printed SDL: every `graphql()`
 * document in `src/` gets its result and variables types, fragments are masked, and the
 * persisted documents manifest is written beside them (`src/gql/persisted-documents.json`),
 * which the gateway takes as its trusted documents. Run `npm run codegen` after changing a
 * document; `npm run typecheck` then checks the app against the graph.
 */
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: '../../schema/printed/api.graphql',
  documents: ['src/**/*.ts', '!src/gql/**'],
  // A document that does not validate against the graph stops the run, naming the field.
  ignoreNoDocuments: false,
  generates: {
    'src/gql/': {
      preset: 'client',
      config: {
        // Documents as typed strings: no GraphQL runtime in the bundle, fetch sends what it needs.
        documentMode: 'string',
        enumsAsTypes: true,
        useTypeImports: true,
        scalars: { ID: 'string', DateTime: 'string' },
      },
      presetConfig: {
        // No UI framework here, so the unmasking function is not a hook.
        fragmentMasking: { unmaskFunctionName: 'getFragmentData' },
        // The app ships each document's key only; the text stays in the manifest, on the gateway.
        persistedDocuments: { mode: 'replaceDocumentWithHash', hashAlgorithm: 'sha256' },
      },
    },
  },
};

export default config;
