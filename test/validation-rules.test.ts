/**
 * The gateway's validation rules (graphql-armor's limits, the introspection ban) are added by one
 * plugin, which keeps each document's validation result in place of yoga's validation cache: a
 * document is validated once, and its errors are answered again, alike, each time it comes back.
 */
import { GraphQLError, type ValidationRule } from 'graphql';
import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useValidationRules } from '../src/security/query-limits.js';

/** A rule that counts the documents it validates and refuses every field named `secret`. */
function countingRule(): { rule: ValidationRule; runs: () => number } {
  let runs = 0;
  const rule: ValidationRule = (context) => {
    runs += 1;
    return {
      Field(node) {
        if (node.name.value === 'secret')
          context.reportError(new GraphQLError('secret is refused', { nodes: node, extensions: { code: 'REFUSED' } }));
      },
    };
  };
  return { rule, runs: () => runs };
}

function yogaWith(rule: ValidationRule, hooks: Parameters<typeof useValidationRules>[1] = []) {
  return createYoga({
    schema: createSchema({ typeDefs: 'type Query { open: String, secret: String }', resolvers: {} }),
    parserAndValidationCache: { validationCache: false },
    plugins: [useValidationRules([rule], hooks)],
    logging: false,
  });
}

async function ask(yoga: ReturnType<typeof yogaWith>, query: string) {
  const response = await yoga.fetch('http://gateway.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

describe('useValidationRules', () => {
  it('validates a document once, however often it is asked, and each new document once', async () => {
    const { rule, runs } = countingRule();
    const yoga = yogaWith(rule);

    const answers = [await ask(yoga, '{ open }'), await ask(yoga, '{ open }'), await ask(yoga, '{ open }')];
    expect(answers).toEqual(Array.from({ length: 3 }, () => ({ status: 200, body: { data: { open: null } } })));
    expect(runs()).toBe(1);

    await ask(yoga, '{ open __typename }');
    expect(runs()).toBe(2);
  });

  it('answers a refused document with the same errors each time, without validating it again', async () => {
    const { rule, runs } = countingRule();
    const yoga = yogaWith(rule);

    const first = await ask(yoga, '{ secret }');
    const second = await ask(yoga, '{ secret }');

    const refusal = {
      status: 400,
      body: {
        errors: [
          { message: 'secret is refused', locations: [{ line: 1, column: 3 }], extensions: { code: 'REFUSED' } },
        ],
      },
    };
    expect(first).toEqual(refusal);
    expect(second).toEqual(refusal);
    expect(runs()).toBe(1);
  });

  it("runs another plugin's validation hook (one that adds rules) once per document, with its rules applied", async () => {
    const { rule, runs } = countingRule();
    const added = countingRule();
    let hookCalls = 0;
    const yoga = yogaWith(rule, [
      ({ addValidationRule }) => {
        hookCalls += 1;
        addValidationRule(added.rule);
      },
    ]);

    await ask(yoga, '{ open }');
    await ask(yoga, '{ open }');
    const refused = await ask(yoga, '{ secret }');

    expect(hookCalls).toBe(2);
    expect([runs(), added.runs()]).toEqual([2, 2]);
    // Both the rule and the hook's rule refuse the field: two errors.
    expect(refused.status).toBe(400);
    expect((refused.body as { errors: unknown[] }).errors).toHaveLength(2);
  });

  it("keeps what a hook that changes the errors left (graphql-armor's suggestion mask), answered alike each time", async () => {
    const { rule } = countingRule();
    let hookCalls = 0;
    const yoga = yogaWith(rule, [
      () => {
        hookCalls += 1;
        return ({ valid, result, setResult }) => {
          if (!valid) setResult(result.map((error: Error) => new GraphQLError(`${error.message} (changed)`)));
        };
      },
      () =>
        ({ result, setResult }) =>
          setResult([...result, new GraphQLError('seen after the change')]),
    ]);

    const answers = [await ask(yoga, '{ secret }'), await ask(yoga, '{ secret }')];

    const changed = {
      status: 400,
      body: {
        errors: [
          // yoga gives an error without a code its own.
          { message: 'secret is refused (changed)', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
          { message: 'seen after the change', extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } },
        ],
      },
    };
    expect(answers).toEqual([changed, changed]);
    expect(hookCalls).toBe(1);
  });
});
