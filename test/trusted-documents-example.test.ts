/**
 * The worked example of docs/trusted-documents.md: an app's GraphQL Code Generator config
 * (client preset, persisted documents) builds the manifest committed beside it, and a gateway
 * started with that manifest (TRUSTED_DOCUMENTS) runs each of its documents by hash, as the
 * page shows, and refuses anything else.
 */
import { readFileSync } from 'node:fs';
import { generate, type CodegenConfig } from '@graphql-codegen/cli';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { useObserved } from './helpers/observed.js';
import { PROJECT_ROOT } from './helpers/process.js';

const EXAMPLE = `${PROJECT_ROOT}docs/examples/trusted-documents/`;
const MANIFEST = `${EXAMPLE}gql/persisted-documents.json`;
const committed = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;

/** Variables the page's requests send, by operation name. */
const VARIABLES: Record<string, Record<string, unknown>> = {
  PetCard: { id: '1' },
  Inventory: {},
  RenamePet: { id: '2', name: 'Rex' },
};

describe('the trusted documents example', () => {
  const observed = useObserved();

  it("is the manifest the app's codegen config writes", async () => {
    const config = parse(readFileSync(`${EXAMPLE}codegen.yml`, 'utf8')) as CodegenConfig;

    // generate() is typed as returning any: what it returns without saving is the files it would write.
    const outputs: unknown = await generate({ ...config, cwd: EXAMPLE, silent: true }, false);
    if (!isFileList(outputs)) throw new Error('graphql-codegen returned no list of files');

    const manifest = outputs.find((output) => output.filename.endsWith('persisted-documents.json'));
    expect(manifest?.filename).toBe('gql/persisted-documents.json');
    expect(JSON.parse(manifest?.content ?? '{}')).toEqual(committed);
    expect(Object.keys(committed)).toHaveLength(3);
  });

  it('is what docs/trusted-documents.md shows: the config and the manifest', () => {
    const page = readFileSync(`${PROJECT_ROOT}docs/trusted-documents.md`, 'utf8');
    const blocks = (language: string) =>
      [...page.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((match) => match[1] ?? '');
    const config = readFileSync(`${EXAMPLE}codegen.yml`, 'utf8').replace(/^#.*\n/gm, '');

    expect(blocks('yaml')).toEqual([config]);
    expect(blocks('json').map((block) => JSON.parse(block) as unknown)[0]).toEqual(committed);
  });

  it('runs each document of the manifest by its key, and nothing else', async () => {
    const gateway = await observed.serve(undefined, { trustedDocuments: MANIFEST, graphiql: false });
    const send = (body: Record<string, unknown>) =>
      fetch(gateway.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/graphql-response+json',
          authorization: 'Bearer demo',
          api_key: 'demo',
        },
        body: JSON.stringify(body),
      });

    for (const [hash, document] of Object.entries(committed)) {
      const name = /^(?:query|mutation) (\w+)/.exec(document)?.[1] ?? '';
      const answer = await send({
        variables: VARIABLES[name],
        extensions: { persistedQuery: { version: 1, sha256Hash: hash } },
      });
      const body = (await answer.json()) as { data?: unknown; errors?: unknown };
      expect({ name, status: answer.status, errors: body.errors }).toEqual({ name, status: 200, errors: undefined });
      expect(body.data).toBeTruthy();
    }
    const text = await send({ query: Object.values(committed)[0] });
    expect(codes(await text.json())).toEqual(['TRUSTED_DOCUMENT_REQUIRED']);
    expect(text.status).toBe(400);
  });
});

function isFileList(value: unknown): value is { filename: string; content: string }[] {
  return Array.isArray(value) && value.every((file) => typeof (file as { filename?: unknown }).filename === 'string');
}

const codes = (body: unknown) =>
  (body as { errors?: { extensions?: { code?: string } }[] }).errors?.map((error) => error.extensions?.code);
