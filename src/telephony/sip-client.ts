/**
 * One way to reach LiveKit's SIP API for every telephony part that needs it (cold transfers,
 * dialling out): the app's own client, or livekit-server-sdk's `SipClient` built from options
 * or LIVEKIT_URL / LIVEKIT_API_KEY / LIVEKIT_API_SECRET, with a clear error when the URL or
 * the optional package is missing.
 */
import type { SipClient } from 'livekit-server-sdk';
import { TasklineError } from '../core/errors.js';
import { loadOptional } from '../core/optional.js';

/** Where the SIP API is (each falls back to its LIVEKIT_* environment variable). */
export interface SipApiOptions {
  url?: string;
  apiKey?: string;
  apiSecret?: string;
}

/** livekit-server-sdk's `SipClient` for `options`; `purpose` names the feature in errors. */
export async function connectSipClient(
  options: SipApiOptions,
  purpose: string,
): Promise<SipClient> {
  const url = options.url ?? process.env.LIVEKIT_URL;
  if (!url) {
    throw new TasklineError(
      'invalid_state',
      `${purpose} needs a LiveKit URL: set LIVEKIT_URL or pass { url }.`,
    );
  }
  const { SipClient } = await loadOptional(
    () => import('livekit-server-sdk'),
    'livekit-server-sdk',
    purpose,
  );
  return new SipClient(
    url,
    options.apiKey ?? process.env.LIVEKIT_API_KEY,
    options.apiSecret ?? process.env.LIVEKIT_API_SECRET,
  );
}
