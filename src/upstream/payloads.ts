/**
 * The REST payloads of both areas, described once. Each description gives the decoder, the
 * encoders and the TypeScript type (the code generator maps graph types onto these).
 * Field names, XML element names and widths follow the pet store's and plant area's OpenAPI
 * documents; only fields the graph uses are listed (anything else an upstream sends is dropped).
 */
import { boolean, datetime, int32, int64, list, object, string, type Payload } from './codec.js';

export const CategoryShape = object('category', { id: int64, name: string });
export const TagShape = object('tag', { id: int64, name: string });

export const PetShape = object('pet', {
  id: int64,
  category: CategoryShape,
  name: string,
  photoUrls: list(string, 'photoUrl'),
  tags: list(TagShape, 'tag'),
  status: string,
});
export const PetListShape = list(PetShape, 'pet');

export const OrderShape = object('order', {
  id: int64,
  petId: int64,
  quantity: int32,
  shipDate: datetime,
  status: string,
  complete: boolean,
});

// A user as read: the upstream echoes passwords, and a field the shape does not name is dropped
// when decoded, so a password never gets past the decoder.
export const UserShape = object('user', {
  id: int64,
  username: string,
  firstName: string,
  lastName: string,
  email: string,
  phone: string,
  userStatus: int32,
});
export const UserListShape = list(UserShape, 'user');

// A user as written, with the password (fields in the reference server's order).
export const NewUserShape = object('user', {
  id: int64,
  username: string,
  firstName: string,
  lastName: string,
  email: string,
  password: string,
  phone: string,
  userStatus: int32,
});
export const NewUserListShape = list(NewUserShape, 'user');

export const ApiResponseShape = object('apiResponse', { code: int32, type: string, message: string });

export const PlantShape = object('plant', { name: string, tag: string });
export const NewPlantShape = object('newPlant', { id: int64, name: string, tag: string });

export type CategoryPayload = Payload<typeof CategoryShape>;
export type TagPayload = Payload<typeof TagShape>;
export type PetPayload = Payload<typeof PetShape>;
export type OrderPayload = Payload<typeof OrderShape>;
export type UserPayload = Payload<typeof UserShape>;
export type NewUserPayload = Payload<typeof NewUserShape>;
export type ApiResponsePayload = Payload<typeof ApiResponseShape>;
export type PlantPayload = Payload<typeof PlantShape>;
export type NewPlantPayload = Payload<typeof NewPlantShape>;
/** `GET /store/inventory`: quantity by status. */
export type InventoryPayload = Record<string, number>;

/** Pet status values as the REST areas spell them; the graph's `PetStatus` enum maps onto these. */
export enum PetStatus {
  AVAILABLE = 'available',
  PENDING = 'pending',
  SOLD = 'sold',
}
