/**
 * Users through the gateway against the emulator: reading a user (its name percent-encoded as
 * one path segment), creating and updating users in each body format, and the password, which
 * goes upstream but never comes back out of the graph.
 */
import { describe, expect, it } from 'vitest';
import type { BodyFormat } from '../src/upstream/codec.js';
import { ALL_CREDENTIALS, received, type Stack, useStack } from './helpers/stack.js';
import { UPSTREAM } from './helpers/upstream.js';

/** Posts a GraphQL operation with every credential and returns the response as raw text. */
async function responseText(stack: Stack, query: string, variables: Record<string, unknown>): Promise<string> {
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json, application/json',
      ...ALL_CREDENTIALS,
    },
    body: JSON.stringify({ query, variables }),
  });
  return response.text();
}

const MAX_INT64 = '9223372036854775807';
const USER_FIELDS = 'id username firstName lastName email phone userStatus';
const NO_CREDENTIAL = { authorization: undefined, apiKey: undefined };
/**
 * Whether PUT /user/{username} answers the updated User. The reference server does, so the
 * gateway returns that; the emulator answers without a body, as the interface document declares,
 * so the gateway reads the user back with GET /user/{name}.
 */
const PUT_USER_ANSWERS_THE_USER = UPSTREAM === 'reference';

const stack = useStack();

describe('user(username)', () => {
  it('returns the user, without its password', async () => {
    const result = await stack.gql(`{ user(username: "user1") { ${USER_FIELDS} } }`, {}, ALL_CREDENTIALS);

    expect(result).toEqual({
      status: 200,
      data: {
        user: {
          id: '1',
          username: 'user1',
          firstName: 'first name 1',
          lastName: 'last name 1',
          email: 'email1@test.com',
          phone: '123-456-7890',
          userStatus: 1,
        },
      },
    });
  });

  it('sends GET /user/{username} without forwarding any credential', async () => {
    await stack.gql('{ user(username: "user2") { username } }', {}, ALL_CREDENTIALS);

    expect(received(stack)).toEqual([
      { method: 'GET', path: '/api/v3/user/user2', query: '', contentType: undefined, ...NO_CREDENTIAL, body: '' },
    ]);
  });

  it('is null, without an error, when the user does not exist', async () => {
    const result = await stack.gql('{ user(username: "nobody") { username } }', {}, ALL_CREDENTIALS);

    expect(result).toEqual({ status: 200, data: { user: null } });
    expect(received(stack).map((request) => [request.method, request.path])).toEqual([['GET', '/api/v3/user/nobody']]);
  });

  it.each([
    ['../pet/1', '/api/v3/user/%2E%2E%2Fpet%2F1'],
    ['..', '/api/v3/user/%2E%2E'],
    ['a?status=sold', '/api/v3/user/a%3Fstatus%3Dsold'],
    ['a#b', '/api/v3/user/a%23b'],
    ['ann lee', '/api/v3/user/ann%20lee'],
    ['zoë/名前', '/api/v3/user/zo%C3%AB%2F%E5%90%8D%E5%89%8D'],
    ['%2E%2E', '/api/v3/user/%252E%252E'],
  ])('sends the name %j as one percent-encoded path segment (%s), never another path', async (username, rawPath) => {
    const result = await stack.gql(
      'query ($username: String!) { user(username: $username) { username } }',
      { username },
      ALL_CREDENTIALS,
    );

    expect(result).toEqual({ status: 200, data: { user: null } });
    expect(received(stack)).toEqual([
      { method: 'GET', path: rawPath, query: '', contentType: undefined, ...NO_CREDENTIAL, body: '' },
    ]);
  });

  it('finds a user whose name has slashes, question marks, spaces and unicode', async () => {
    const username = 'zoë/../a?b c';
    await stack.gql(
      'mutation ($input: UserInput!) { createUser(input: $input) { username } }',
      { input: { username } },
      ALL_CREDENTIALS,
    );
    stack.upstream();

    const result = await stack.gql(
      'query ($username: String!) { user(username: $username) { username } }',
      { username },
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({ user: { username } });
    expect(received(stack).map((request) => [request.method, request.path, request.query])).toEqual([
      ['GET', '/api/v3/user/zo%C3%AB%2F%2E%2E%2Fa%3Fb%20c', ''],
    ]);
  });

  it('rejects an empty user name with BAD_USER_INPUT before any upstream call', async () => {
    const result = await stack.gql('{ user(username: "") { username } }', {}, ALL_CREDENTIALS);

    expect(result.data).toEqual({ user: null });
    expect(result.errors?.map((error) => [error.path, error.extensions?.['code']])).toEqual([
      [['user'], 'BAD_USER_INPUT'],
    ]);
    expect(stack.upstream()).toEqual([]);
  });
});

describe('the User type', () => {
  it('has no password field: selecting one fails validation, before any upstream call', async () => {
    const result = await stack.gql('{ user(username: "user1") { username password } }', {}, ALL_CREDENTIALS);

    expect(result.data).toBeUndefined();
    expect(result.errors?.map((error) => [error.message, error.extensions?.['code']])).toEqual([
      ['Cannot query field "password" on type "User".', 'GRAPHQL_VALIDATION_FAILED'],
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('lists no password field in introspection, while UserInput accepts one', async () => {
    const result = await stack.gql(
      '{ user: __type(name: "User") { fields { name } } input: __type(name: "UserInput") { inputFields { name } } }',
    );

    expect(result.data).toEqual({
      user: {
        fields: ['id', 'username', 'firstName', 'lastName', 'email', 'phone', 'userStatus'].map((name) => ({ name })),
      },
      input: {
        inputFields: ['id', 'username', 'firstName', 'lastName', 'email', 'password', 'phone', 'userStatus'].map(
          (name) => ({ name }),
        ),
      },
    });
    expect(stack.upstream()).toEqual([]);
  });
});

/** The user the createUser tests create: an int64 id, a name and password that need escaping in every format. */
const NEW_USER = {
  id: MAX_INT64,
  username: 'zoë lee',
  firstName: 'Zoë',
  email: 'zoe@example.com',
  password: 's3cr&t<pa55>',
  phone: '555-0100',
  userStatus: 2,
};

const CREATE_USER_BODIES: Record<BodyFormat, { contentType: string; body: string }> = {
  json: {
    contentType: 'application/json',
    body: `{"id":${MAX_INT64},"username":"zoë lee","firstName":"Zoë","email":"zoe@example.com","password":"s3cr&t<pa55>","phone":"555-0100","userStatus":2}`,
  },
  xml: {
    contentType: 'application/xml',
    body:
      `<?xml version="1.0" encoding="UTF-8"?><user><id>${MAX_INT64}</id><username>zoë lee</username><firstName>Zoë</firstName>` +
      '<email>zoe@example.com</email><password>s3cr&amp;t&lt;pa55&gt;</password><phone>555-0100</phone><userStatus>2</userStatus></user>',
  },
  form: {
    contentType: 'application/x-www-form-urlencoded',
    body: `id=${MAX_INT64}&username=zo%C3%AB%20lee&firstName=Zo%C3%AB&email=zoe%40example.com&password=s3cr%26t%3Cpa55%3E&phone=555-0100&userStatus=2`,
  },
};

/** The change the updateUser tests make: user1 renamed, with a new password. */
const RENAMED_USER = {
  id: '1',
  username: 'user1-renamed',
  firstName: 'Renamed',
  email: 'renamed@test.com',
  password: 'n3w&pw',
  userStatus: 3,
};

const UPDATE_USER_BODIES: Record<BodyFormat, { contentType: string; body: string }> = {
  json: {
    contentType: 'application/json',
    body: '{"id":1,"username":"user1-renamed","firstName":"Renamed","email":"renamed@test.com","password":"n3w&pw","userStatus":3}',
  },
  xml: {
    contentType: 'application/xml',
    body:
      '<?xml version="1.0" encoding="UTF-8"?><user><id>1</id><username>user1-renamed</username><firstName>Renamed</firstName>' +
      '<email>renamed@test.com</email><password>n3w&amp;pw</password><userStatus>3</userStatus></user>',
  },
  form: {
    contentType: 'application/x-www-form-urlencoded',
    body: 'id=1&username=user1-renamed&firstName=Renamed&email=renamed%40test.com&password=n3w%26pw&userStatus=3',
  },
};

const CREATE_USER = `mutation ($input: UserInput!) { createUser(input: $input) { ${USER_FIELDS} } }`;
const UPDATE_USER = `mutation ($username: String!, $input: UserInput!) { updateUser(username: $username, input: $input) { ${USER_FIELDS} } }`;

describe.each(['json', 'xml', 'form'] as const)('with %s bodies', (format) => {
  const stack = useStack({ petstoreBodyFormat: format });

  describe('createUser', () => {
    it('returns the created user, its int64 id exact', async () => {
      const result = await stack.gql(CREATE_USER, { input: NEW_USER }, ALL_CREDENTIALS);

      expect(result).toEqual({
        status: 200,
        data: {
          createUser: {
            id: MAX_INT64,
            username: 'zoë lee',
            firstName: 'Zoë',
            lastName: null,
            email: 'zoe@example.com',
            phone: '555-0100',
            userStatus: 2,
          },
        },
      });
    });

    it(`sends POST /user with the password in the exact ${format} body, and no credential`, async () => {
      await stack.gql(CREATE_USER, { input: NEW_USER }, ALL_CREDENTIALS);

      expect(received(stack)).toEqual([
        { method: 'POST', path: '/api/v3/user', query: '', ...NO_CREDENTIAL, ...CREATE_USER_BODIES[format] },
      ]);
    });

    it('never returns the password, although the upstream echoes it', async () => {
      const text = await responseText(stack, CREATE_USER, { input: NEW_USER });

      expect(text).toContain('zoe@example.com');
      expect(text).not.toContain(NEW_USER.password);
      expect(text).not.toContain('s3cr');
      expect(received(stack).map((request) => [request.method, request.path, request.body.includes('s3cr')])).toEqual([
        ['POST', '/api/v3/user', true],
      ]);
      // The upstream does hold and echo a password: keeping it out of the answer is the gateway's
      // doing. (The reference server stores its mask `XXXXXXXXXXX` for a form-encoded user.)
      const stored = UPSTREAM === 'reference' && format === 'form' ? 'XXXXXXXXXXX' : NEW_USER.password;
      const echoed = await fetch(`${stack.emulator.petstoreUrl}/user/${encodeURIComponent(NEW_USER.username)}`);
      expect(await echoed.text()).toContain(`"password":"${stored}"`);
      expect(text).not.toContain(stored);
    });
  });

  describe('createUsers', () => {
    it('sends POST /user/createWithList with a JSON array body, whatever the configured body format', async () => {
      await stack.gql(
        'mutation ($input: [UserInput!]!) { createUsers(input: $input) { username } }',
        { input: [NEW_USER, { username: 'bob', password: 'b0b' }] },
        ALL_CREDENTIALS,
      );

      expect(received(stack)).toEqual([
        {
          method: 'POST',
          path: '/api/v3/user/createWithList',
          query: '',
          contentType: 'application/json',
          ...NO_CREDENTIAL,
          body: `[${CREATE_USER_BODIES.json.body},{"username":"bob","password":"b0b"}]`,
        },
      ]);
    });
  });

  describe('updateUser', () => {
    it(`sends PUT /user/{username} with the exact ${format} body, then reads the user back under its new name unless the PUT answered it`, async () => {
      await stack.gql(UPDATE_USER, { username: 'user1', input: RENAMED_USER }, ALL_CREDENTIALS);

      const put = {
        method: 'PUT',
        path: '/api/v3/user/user1',
        query: '',
        ...NO_CREDENTIAL,
        ...UPDATE_USER_BODIES[format],
      };
      const readBack = {
        method: 'GET',
        path: '/api/v3/user/user1-renamed',
        query: '',
        contentType: undefined,
        ...NO_CREDENTIAL,
        body: '',
      };
      expect(received(stack)).toEqual(PUT_USER_ANSWERS_THE_USER ? [put] : [put, readBack]);
    });

    it('returns the updated user under its new name, without its password', async () => {
      const result = await stack.gql(UPDATE_USER, { username: 'user1', input: RENAMED_USER }, ALL_CREDENTIALS);

      expect(result).toEqual({
        status: 200,
        data: {
          updateUser: {
            id: '1',
            username: 'user1-renamed',
            firstName: 'Renamed',
            lastName: null,
            email: 'renamed@test.com',
            phone: null,
            userStatus: 3,
          },
        },
      });
    });

    it('renames the user: the old name no longer resolves, the new one does', async () => {
      await stack.gql(UPDATE_USER, { username: 'user1', input: RENAMED_USER }, ALL_CREDENTIALS);
      stack.upstream();

      const result = await stack.gql(
        '{ old: user(username: "user1") { username } new: user(username: "user1-renamed") { id username } }',
        {},
        ALL_CREDENTIALS,
      );

      expect(result.data).toEqual({ old: null, new: { id: '1', username: 'user1-renamed' } });
      expect(
        received(stack)
          .map((request) => request.path)
          .sort(),
      ).toEqual(['/api/v3/user/user1', '/api/v3/user/user1-renamed']);
    });
  });
});

describe('createUsers', () => {
  it('returns the created users in the order given, without passwords', async () => {
    const input = [
      { username: 'carol', firstName: 'Carol', password: 'c4r0l' },
      { id: MAX_INT64, username: 'dave', password: 'd4v3' },
      { username: 'erin', userStatus: 1 },
    ];

    const result = await stack.gql(
      'mutation ($input: [UserInput!]!) { createUsers(input: $input) { id username firstName userStatus } }',
      { input },
      ALL_CREDENTIALS,
    );

    // The reference server answers the users as it stored them: its User has primitive `id` and
    // `userStatus`, so the ones left out are 0. The emulator answers no list; the gateway returns the input.
    const created =
      UPSTREAM === 'reference'
        ? [
            { id: '0', username: 'carol', firstName: 'Carol', userStatus: 0 },
            { id: MAX_INT64, username: 'dave', firstName: null, userStatus: 0 },
            { id: '0', username: 'erin', firstName: null, userStatus: 1 },
          ]
        : [
            { id: null, username: 'carol', firstName: 'Carol', userStatus: null },
            { id: MAX_INT64, username: 'dave', firstName: null, userStatus: null },
            { id: null, username: 'erin', firstName: null, userStatus: 1 },
          ];
    expect(result).toEqual({ status: 200, data: { createUsers: created } });
    expect(received(stack).map((request) => [request.method, request.path, request.body])).toEqual([
      [
        'POST',
        '/api/v3/user/createWithList',
        `[{"username":"carol","firstName":"Carol","password":"c4r0l"},{"id":${MAX_INT64},"username":"dave","password":"d4v3"},{"username":"erin","userStatus":1}]`,
      ],
    ]);
  });

  it('stores every user of the list', async () => {
    await stack.gql(
      'mutation { createUsers(input: [{ username: "carol" }, { username: "dave" }]) { username } }',
      {},
      ALL_CREDENTIALS,
    );
    stack.upstream();

    const result = await stack.gql(
      '{ carol: user(username: "carol") { username } dave: user(username: "dave") { username } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toEqual({ carol: { username: 'carol' }, dave: { username: 'dave' } });
    expect(
      received(stack)
        .map((request) => request.path)
        .sort(),
    ).toEqual(['/api/v3/user/carol', '/api/v3/user/dave']);
  });

  it('rejects an empty list with BAD_USER_INPUT before any upstream call', async () => {
    const result = await stack.gql('mutation { createUsers(input: []) { username } }', {}, ALL_CREDENTIALS);

    expect(result.data).toBeNull();
    expect(result.errors?.map((error) => [error.path, error.extensions?.['code'], error.message])).toEqual([
      [['createUsers'], 'BAD_USER_INPUT', 'input must contain at least one user'],
    ]);
    expect(stack.upstream()).toEqual([]);
  });

  it('rejects a user with an empty name with BAD_USER_INPUT, naming it, before any upstream call', async () => {
    const result = await stack.gql(
      'mutation { createUsers(input: [{ username: "carol" }, { username: "" }]) { username } }',
      {},
      ALL_CREDENTIALS,
    );

    expect(result.data).toBeNull();
    expect(result.errors?.map((error) => [error.extensions?.['code'], error.message])).toEqual([
      ['BAD_USER_INPUT', 'input[1].username must not be empty'],
    ]);
    expect(stack.upstream()).toEqual([]);
  });
});

describe('updateUser', () => {
  it('keeps the name when the input repeats it: PUT, and read back under the same name unless the PUT answered the user', async () => {
    const result = await stack.gql(
      UPDATE_USER,
      { username: 'user2', input: { id: '2', username: 'user2', phone: '555-0199' } },
      ALL_CREDENTIALS,
    );

    // The reference server's User has a primitive `userStatus`: left out, it is stored as 0.
    const userStatus = UPSTREAM === 'reference' ? 0 : null;
    expect(result.data).toEqual({
      updateUser: {
        id: '2',
        username: 'user2',
        firstName: null,
        lastName: null,
        email: null,
        phone: '555-0199',
        userStatus,
      },
    });
    const put = ['PUT', '/api/v3/user/user2', '{"id":2,"username":"user2","phone":"555-0199"}'];
    const readBack = ['GET', '/api/v3/user/user2', ''];
    expect(received(stack).map((request) => [request.method, request.path, request.body])).toEqual(
      PUT_USER_ANSWERS_THE_USER ? [put] : [put, readBack],
    );
  });

  it('is NOT_FOUND, with the upstream status 404, when the user does not exist', async () => {
    const result = await stack.gql(
      UPDATE_USER,
      { username: 'nobody', input: { username: 'somebody' } },
      ALL_CREDENTIALS,
    );

    expect(result.data).toBeNull();
    expect(result.errors).toHaveLength(1);
    expect(result.errors?.[0]?.path).toEqual(['updateUser']);
    expect(result.errors?.[0]?.extensions).toEqual({
      code: 'NOT_FOUND',
      upstream: { service: 'petstore', operation: 'updateUser', status: 404 },
    });
    expect(received(stack).map((request) => [request.method, request.path, request.body])).toEqual([
      ['PUT', '/api/v3/user/nobody', '{"username":"somebody"}'],
    ]);
  });

  it('percent-encodes the current name as one path segment', async () => {
    await stack.gql(UPDATE_USER, { username: '../pet/1', input: { username: 'x' } }, ALL_CREDENTIALS);

    expect(received(stack).map((request) => [request.method, request.path, request.query])).toEqual([
      ['PUT', '/api/v3/user/%2E%2E%2Fpet%2F1', ''],
    ]);
  });

  it.each([
    ['the current name', '', 'user1', 'username must not be empty'],
    ['the new name', 'user1', '', 'input.username must not be empty'],
  ])(
    'rejects an empty user name as %s with BAD_USER_INPUT before any upstream call',
    async (_, username, newName, message) => {
      const result = await stack.gql(UPDATE_USER, { username, input: { username: newName } }, ALL_CREDENTIALS);

      expect(result.data).toBeNull();
      expect(result.errors?.map((error) => [error.path, error.extensions?.['code'], error.message])).toEqual([
        [['updateUser'], 'BAD_USER_INPUT', message],
      ]);
      expect(stack.upstream()).toEqual([]);
    },
  );
});
