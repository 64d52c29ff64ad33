/**
 * Users: `Query.user` and the user mutations. The User type has no password field, so the
 * password a client sets (and the upstream echoes) never leaves the gateway.
 */
import type { Resolvers } from '../__generated__/resolvers-types.js';
import { badUserInput, incompleteAnswer } from '../errors.js';
import { keyArg, userPayload } from './inputs.js';

export const userResolvers: Resolvers = {
  User: {
    __resolveReference: async (reference, { loaders }) =>
      loaders.userByName.load(keyArg(reference.username, 'User.username')),
    username: (user) => user.username ?? incompleteAnswer('petstore', 'User.username'),
  },
  Query: {
    user: (_, { username }, { loaders }) => loaders.userByName.load(keyArg(username, 'username')),
  },
  Mutation: {
    createUser: (_, { input }, { petstore }) => petstore.createUser(userPayload(input)),
    createUsers: async (_, { input }, { petstore }) => {
      if (input.length === 0) throw badUserInput('input must contain at least one user');
      const users = input.map((user, index) => userPayload(user, `input[${index}]`));
      // The reference server answers with the list; the interface document with a single user.
      return (await petstore.createUsersWithListInput(users)) ?? users.map(({ password: _sent, ...user }) => user);
    },
    deleteUser: async (_, { username }, { petstore, loaders }) => {
      await petstore.deleteUser(keyArg(username, 'username'));
      loaders.userByName.clear(username);
      return true;
    },
    updateUser: async (_, { username, input }, { petstore, loaders }) => {
      const user = userPayload(input);
      const updated = await petstore.updateUser(keyArg(username, 'username'), user);
      // Servers that answer without a body: read the user back under its (possibly new) name.
      return (
        updated ??
        (await loaders.userByName.clear(input.username).load(input.username)) ??
        incompleteAnswer('petstore', 'updateUser result')
      );
    },
  },
};
