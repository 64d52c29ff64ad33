/**
 * The plant area: one operation, POST /plants. Its failures use the area's
 * own Error record `{"error":<int32>,"message":<text>}`, not the pet store's
 * `{"code","message"}`.
 */
import { HttpError, jsonReply } from './http.js';
import type { Reply, RequestContext, Route } from './http.js';
import type { Plant } from './store.js';
import { decodeBody, field, isRecord, readInt64, toJson, UnreadableBody } from './wire.js';

function invalid(message: string): HttpError {
  return new HttpError(400, { error: 400, message });
}

function readNewPlant(tree: unknown): Plant {
  if (!isRecord(tree)) throw invalid('request body must be a JSON object (NewPlant)');
  const id = field(tree, 'id');
  if (id === undefined || id === null) throw invalid('id is required');
  let canonicalId: string | undefined;
  // A quoted id is not an integer, so only a JSON number is read as int64 here.
  if (typeof id !== 'string') {
    try {
      canonicalId = readInt64(id);
    } catch (error) {
      if (!(error instanceof UnreadableBody)) throw error;
    }
  }
  if (canonicalId === undefined) throw invalid('id must be an integer in the int64 range');
  const name = field(tree, 'name');
  if (name === undefined || name === null) throw invalid('name is required');
  if (typeof name !== 'string' || name === '') throw invalid('name must be a non-empty string');
  const tag = field(tree, 'tag');
  if (tag !== undefined && tag !== null && typeof tag !== 'string') throw invalid('tag must be a string');
  return typeof tag === 'string' ? { id: canonicalId, name, tag } : { id: canonicalId, name };
}

function createPlant(context: RequestContext): Reply {
  let tree: unknown;
  try {
    tree = decodeBody(context.body, context.headers['content-type'], ['json']);
  } catch (error) {
    if (error instanceof UnreadableBody) throw invalid('request body is not valid JSON');
    throw error;
  }
  if (tree === undefined) throw invalid('request body is required (NewPlant)');
  const plant = readNewPlant(tree);
  context.store.savePlant(plant);
  // The response is a Plant, which has no id.
  return jsonReply(toJson(plant.tag === undefined ? { name: plant.name } : { name: plant.name, tag: plant.tag }));
}

/** The plant area's routes, relative to the plant base URL. */
export const plantRoutes: Route[] = [{ path: '/plants', operations: { POST: { handle: createPlant } } }];
