import { assertRecordedResponsesMatchContract } from './openapi-contract';

/**
 * Runs after every e2e test (jest `setupFilesAfterEnv`): each response the test apps sent during the
 * test (and its hooks) must keep the committed OpenAPI contract; the test fails listing each violation.
 */
afterEach(() => assertRecordedResponsesMatchContract());
// Responses sent from afterAll hooks, or after the last test of a file.
afterAll(() => assertRecordedResponsesMatchContract());
