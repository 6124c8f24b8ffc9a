/**
 * Reference peer: the plant store's contract on bare Express 5 + mysql2, as a careful engineer
 * would hand-write it. Same SQL as the service, an in-process token cache, nothing else: the
 * routes of express-app.ts with no middleware in front of them.
 *
 *   PORT=3102 DATABASE_URL=mysql://root@127.0.0.1:3306/plantstore node express-peer.js
 */
import { expressPeerApp, serve } from './express-app';
import { PlantStore, readConfig } from './plants-core';

const config = readConfig();
const store = new PlantStore(config);
serve(expressPeerApp(store), store, config, 'express peer');
