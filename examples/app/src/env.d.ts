/** Set by build.js (esbuild's `define`) from the environment of the build. */

/** The gateway's GraphQL endpoint (GRAPHQL_URL). */
declare const GRAPHQL_URL: string;
/** Whether the sign-in form starts with the emulator's demo credentials (DEMO_CREDENTIALS=true). */
declare const DEMO_CREDENTIALS: boolean;
