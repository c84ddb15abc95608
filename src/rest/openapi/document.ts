/** The OpenAPI document is built from the route table: src/api/openapi.ts. */
export { openApiDocument } from '../../api/openapi';
