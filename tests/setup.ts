import { initializeLogger } from '@livekit/agents';

// @livekit/agents refuses to build a session before its logger exists.
initializeLogger({ pretty: false, level: 'silent' });
