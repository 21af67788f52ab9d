/**
 * Upstream's openai TTS for the local speech endpoint, with one workaround.
 *
 * Workaround for @livekit/agents-plugin-openai 1.9.0 (no upstream issue yet): its
 * `ChunkedStream.run()` ignores an abort only when the error's name is "AbortError", but
 * the openai client rejects an aborted request with `APIUserAbortError` (name "Error"),
 * so a TTS request cut off by an interruption or a closing session is rethrown from a
 * background task as an unhandled rejection, which ends the process. This maps that one
 * error to an AbortError before the stream reads it. Delete it when the plugin recognises
 * APIUserAbortError.
 */
import type { APIConnectOptions } from '@livekit/agents';
import type * as openai from '@livekit/agents-plugin-openai';

type OpenAIPlugin = typeof openai;

/** The private request promise the plugin's ChunkedStream reads in `run()`. */
interface RequestHolder {
  stream?: Promise<unknown>;
}

function asAbort(error: unknown): never {
  if (error instanceof Error && error.constructor.name === 'APIUserAbortError') {
    throw new DOMException(error.message, 'AbortError');
  }
  throw error;
}

/** An openai.TTS pointed at `baseURL` whose aborted requests end quietly. */
export function localTts(plugin: OpenAIPlugin, baseURL: string): openai.TTS {
  class LocalTTS extends plugin.TTS {
    override synthesize(text: string, connOptions?: APIConnectOptions, abortSignal?: AbortSignal) {
      const chunked = super.synthesize(text, connOptions, abortSignal);
      const holder = chunked as unknown as RequestHolder;
      holder.stream = holder.stream?.catch(asAbort);
      return chunked;
    }
  }
  return new LocalTTS({ model: 'tts-1', baseURL, apiKey: 'local' });
}
