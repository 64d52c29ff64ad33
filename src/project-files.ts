/**
 * Files the gateway ships beside its code (the SDL and the OpenAPI documents in `schema/`), found
 * from the project root: the nearest folder above this module that holds a `package.json`. That
 * is the same folder whether the module runs from `src/` under tsx, or from the bundle in `dist/`,
 * where the modules no longer sit where their source did.
 */
import { existsSync } from 'node:fs';

/** The project root, found once. */
let root: URL | undefined;

function projectRoot(): URL {
  if (root) return root;
  for (let folder = new URL('./', import.meta.url); ;) {
    if (existsSync(new URL('package.json', folder))) return (root = folder);
    const parent = new URL('../', folder);
    if (parent.href === folder.href)
      throw new Error(`no package.json above ${import.meta.url}: the gateway's schema/ folder cannot be found`);
    folder = parent;
  }
}

/** The URL of a file of the project, from a path relative to its root (e.g. `schema/pets.graphql`). */
export function projectFile(relativePath: string): URL {
  return new URL(relativePath, projectRoot());
}
