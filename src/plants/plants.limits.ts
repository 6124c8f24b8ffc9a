/** The plants' limits: part of the contract (the DTOs, the OpenAPI document and docs/api.md read them from here). */

/**
 * The longest name and tag, in characters (docs/api.md states them; the e2e specs hold the API to
 * them). Widening one also needs a wider column: plant.entity.ts and a migration.
 */
export const PLANT_NAME_MAX_LENGTH = 255;
export const PLANT_TAG_MAX_LENGTH = 64;

/** The largest `limit` a list accepts (an int32, as the contract types it); PLANTS_MAX_PAGE caps the page. */
export const INT32_MAX = 2147483647;
