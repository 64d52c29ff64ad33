/**
 * The REST payloads of both areas, under the names the rest of the gateway uses. Each shape gives
 * the decoder, the encoders and the TypeScript type (the code generator maps graph types onto
 * these types).
 *
 * The shapes themselves are generated from the project's OpenAPI documents
 * (`schema/petstore.openapi.yaml`, `schema/plants.openapi.yaml`) by `npm run codegen`: field
 * names, field order (which is the order of encoded bodies), XML element names and integer widths
 * come from there, so the gateway, the emulator's request validation and the Prism mocks all
 * read one description. A field the documents do not list is dropped when an answer is decoded.
 */
import {
  UserListReadShape,
  UserListSentShape,
  UserReadShape,
  UserSentShape,
  type UserReadPayload,
  type UserSentPayload,
} from '../__generated__/upstream-shapes.js';

export {
  ApiResponseShape,
  NewPlantShape,
  OrderShape,
  PetListShape,
  PetShape,
  PetStatus,
  PlantShape,
  type ApiResponsePayload,
  type CategoryPayload,
  type InventoryPayload,
  type NewPlantPayload,
  type OrderPayload,
  type PetPayload,
  type PlantPayload,
  type TagPayload,
} from '../__generated__/upstream-shapes.js';

// A user as read: the password is write-only in the document. Upstreams echo it, and a field
// the shape does not name is dropped when decoded, so a password never gets past the decoder.
export const UserShape = UserReadShape;
export const UserListShape = UserListReadShape;
export type UserPayload = UserReadPayload;

// A user as written, with the password (fields in the reference server's order).
export const NewUserShape = UserSentShape;
export const NewUserListShape = UserListSentShape;
export type NewUserPayload = UserSentPayload;
