// Imported first by main.ts: the SDK must be running before http, ioredis and the app are loaded.
import { startTracing } from './tracing';

startTracing();
