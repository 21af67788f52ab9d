/**
 * The native side of rtc-node, as far as a LiveKit server is involved — and nothing more.
 *
 * rtc-node talks to its Rust core through one FfiClient singleton: `request()` sends a
 * protobuf FfiRequest and returns the FfiResponse, and the core pushes FfiEvents that the
 * client re-emits as `ffi_event`, where every `Room` dispatches them (`onFfiEvent` →
 * `processFfiEvent` → `RoomEvent`s). This module keeps the real client and the real native
 * core (loaded offline from the registry package), and answers only the requests that
 * would need a server — those naming a room or participant this simulation created — and
 * emits the server's events through the same client, encoded and decoded with rtc-node's
 * own generated protobuf classes (proto2 required fields are checked on the way).
 *
 * Handles: rtc-node wraps every owned handle id in a native `FfiHandle` whose finalizer
 * drops it in the core, and dropping an id the core never issued throws an uncaught error
 * at GC time. So every id this simulation hands out is a real native handle, minted by
 * asking the core for a cheap object it can create offline (an audio resampler).
 */
import type { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import * as pb from '@livekit/rtc-ffi-bindings';

type PartialRequest = ConstructorParameters<typeof pb.FfiRequest>[0];
type RequestCase = NonNullable<pb.FfiRequest['message']['case']>;
type ResponseMessage = pb.FfiResponse['message'];
type EventMessage = pb.FfiEvent['message'];

/** rtc-node's FfiClient, as this module uses it (the class is not exported by rtc-node). */
interface NativeFfiClient extends EventEmitter {
  request<T>(req: PartialRequest): T;
}

/** Answers one simulated request, or returns undefined when it is not this handler's. */
export type FfiHandler = (request: pb.FfiRequest) => ResponseMessage | undefined;

const INSTALLED = Symbol.for('taskline.tests.ffiBoundary');

/** The single boundary of this process (rtc-node's FfiClient is a process-wide singleton). */
export class FfiBoundary {
  private readonly client: NativeFfiClient;
  private readonly native: (req: PartialRequest) => unknown;
  private readonly handlers = new Set<FfiHandler>();
  private readonly owned = new Set<bigint>();
  private nextAsyncId = 1_000_000n;
  private pending = 0;
  private readonly drainWaiters: Array<() => void> = [];

  /** The boundary of this process, installed on first use. */
  static get(): FfiBoundary {
    const g = globalThis as { [INSTALLED]?: FfiBoundary };
    g[INSTALLED] ??= new FfiBoundary();
    return g[INSTALLED];
  }

  private constructor() {
    const require = createRequire(import.meta.url);
    const dist = dirname(require.resolve('@livekit/rtc-node'));
    const { FfiClient } = require(join(dist, 'ffi_client.cjs')) as {
      FfiClient: { instance: NativeFfiClient };
    };
    this.client = FfiClient.instance;
    // rtc-node's own pino logger logs every connect at debug level outside production.
    const { log } = require(join(dist, 'log.cjs')) as { log: { level: string } };
    log.level = 'warn';
    this.native = this.client.request.bind(this.client);
    this.client.request = <T>(req: PartialRequest): T => this.request(req) as T;
  }

  /** Adds a handler for simulated requests; returns the function that removes it. */
  route(handler: FfiHandler): () => void {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  /** A fresh id the native core really issued, safe for rtc-node to wrap and drop. */
  mintHandle(): bigint {
    const res = this.native({
      message: { case: 'newAudioResampler', value: new pb.NewAudioResamplerRequest() },
    }) as pb.NewAudioResamplerResponse;
    const id = res.resampler?.handle?.id;
    if (id === undefined) throw new Error('the native core issued no handle');
    this.owned.add(id);
    return id;
  }

  /** True when `id` was minted here (a request naming it is simulated). */
  owns(id: bigint | undefined): boolean {
    return id !== undefined && this.owned.has(id);
  }

  /** A fresh async id for a simulated asynchronous request. */
  asyncId(): bigint {
    this.nextAsyncId += 1n;
    return this.nextAsyncId;
  }

  /**
   * Emits an event as the core does: after the current task (so a `waitFor` registered
   * right after a request sees it), encoded and decoded like a native event.
   */
  emit(message: EventMessage): void {
    const event = pb.FfiEvent.fromBinary(new pb.FfiEvent({ message }).toBinary());
    this.pending += 1;
    setImmediate(() => {
      this.pending -= 1;
      this.client.emit('ffi_event', event);
      if (this.pending === 0) {
        // rtc-node dispatches each event behind a mutex (microtasks); one more turn later
        // every Room has emitted its RoomEvents.
        setImmediate(() => {
          if (this.pending === 0) for (const w of this.drainWaiters.splice(0)) w();
        });
      }
    });
  }

  /** Resolves once every emitted event has been dispatched by rtc-node. */
  drained(): Promise<void> {
    if (this.pending === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private request(req: PartialRequest): unknown {
    const request = pb.FfiRequest.fromBinary(new pb.FfiRequest(req).toBinary());
    for (const handler of this.handlers) {
      const message = handler(request);
      if (message) {
        const response = pb.FfiResponse.fromBinary(new pb.FfiResponse({ message }).toBinary());
        return response.message.value;
      }
    }
    if (this.names(request)) {
      throw new Error(
        `simulated LiveKit server: ${request.message.case} is not simulated (it named a simulated room or participant)`,
      );
    }
    return this.native(req);
  }

  /** True when a request names a handle minted here. */
  private names(request: pb.FfiRequest): boolean {
    const value = request.message.value as Record<string, unknown> | undefined;
    if (!value) return false;
    return ['roomHandle', 'localParticipantHandle', 'readerHandle', 'writerHandle'].some((k) =>
      this.owns(value[k] as bigint | undefined),
    );
  }
}

/** The request case names this module answers generically: an async call that succeeds. */
export const ACK_CASES = [
  'setLocalAttributes',
  'setLocalMetadata',
  'setLocalName',
  'publishData',
  'publishTranscription',
  'publishSipDtmf',
  'unpublishTrack',
] as const satisfies readonly RequestCase[];

/** The response and callback of an {@link ACK_CASES} request, built from rtc-node's classes. */
export function ack(
  boundary: FfiBoundary,
  kind: (typeof ACK_CASES)[number],
  requestAsyncId?: bigint,
): ResponseMessage {
  const asyncId = requestAsyncId ?? boundary.asyncId();
  const name = kind[0]!.toUpperCase() + kind.slice(1);
  const classes = pb as unknown as Record<
    string,
    new (data: {
      asyncId: bigint;
    }) => pb.SetLocalAttributesResponse
  >;
  const Response = classes[`${name}Response`]!;
  const Callback = classes[`${name}Callback`]!;
  boundary.emit({ case: kind, value: new Callback({ asyncId }) } as EventMessage);
  return { case: kind, value: new Response({ asyncId }) } as ResponseMessage;
}
