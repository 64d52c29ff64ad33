/**
 * The plant area: `POST /plants`. Its security (HTTP bearer) applies to the whole area.
 */
import { credentialHeaders, type Credentials } from '../credentials.js';
import { encodeJson } from './codec.js';
import { decodePayload, type UpstreamClient } from './http.js';
import { NewPlantShape, PlantShape, type NewPlantPayload, type PlantPayload } from './payloads.js';

/** The plant area operations, as functions. */
export type PlantsApi = ReturnType<typeof createPlantsApi>;

/** Binds the plant area operations to a client. */
export function createPlantsApi(client: UpstreamClient) {
  return {
    /** `POST /plants` (bearer): a failure's `{error, message}` record reaches the caller through the error. */
    async createPlant(credentials: Credentials, plant: NewPlantPayload): Promise<PlantPayload> {
      const operation = 'createPlant';
      const response = await client.request({
        operation,
        method: 'POST',
        path: '/plants',
        headers: { accept: 'application/json', ...credentialHeaders(credentials, 'bearer') },
        body: { contentType: 'application/json', data: encodeJson(NewPlantShape, plant) },
      });
      return decodePayload(client, operation, PlantShape, response);
    },
  };
}
