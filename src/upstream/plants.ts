/**
 * The plant area: `createPlant`, as its row of `PLANTS_OPERATIONS` (`operations.ts`) describes it.
 */
import { credentialHeaders, type Credentials } from '../credentials.js';
import { encodeJson } from './codec.js';
import { decodePayload } from './call.js';
import type { UpstreamClient } from './http.js';
import { callOf, PLANTS_OPERATIONS } from './operations.js';
import { NewPlantShape, PlantShape, type NewPlantPayload, type PlantPayload } from './payloads.js';

/** The plant area operations, as functions. */
export type PlantsApi = ReturnType<typeof createPlantsApi>;

/** Binds the plant area operations to a client. */
export function createPlantsApi(client: UpstreamClient) {
  return {
    /** `POST /plants`: a failure's `{error, message}` record reaches the caller through the error. */
    async createPlant(credentials: Credentials, plant: NewPlantPayload): Promise<PlantPayload> {
      const row = PLANTS_OPERATIONS.createPlant;
      const { operation, ...call } = callOf('createPlant', row);
      const response = await client.request({
        operation,
        ...call,
        headers: { accept: 'application/json', ...credentialHeaders(credentials, row.security) },
        body: { contentType: 'application/json', data: encodeJson(NewPlantShape, plant) },
      });
      return decodePayload(client, operation, PlantShape, response);
    },
  };
}
