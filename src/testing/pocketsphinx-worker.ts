/**
 * The warm recogniser process behind {@link PocketsphinxRecognizer}: a Python 3 script on
 * Debian's `python3-pocketsphinx` bindings that loads the en-us acoustic model, language model
 * and dictionary once (~1 s) and then decodes utterances sent as JSON lines on stdin, one
 * JSON line back per request on stdout. Kept as a string so the bundled package runs it with
 * `python3 -c` (no file to locate at run time).
 *
 * Requests (`id` echoed back):
 * - `{"op":"lookup","words":[…]}` → `{"phones":{"word":"Y EH S"|null}}` (null: not in the dictionary)
 * - `{"op":"recognize","audio":base64 16 kHz s16le,"grammar":{"name","jsgf"}|null}` →
 *   `{"frames","lm":Decode|null,"grammar":Decode|null}`, Decode = `{"text","score","words":[[word,
 *   startFrame,endFrame,posterior,phones]]}`; the language-model search always runs, the grammar's
 *   when one is given.
 * Any failure answers `{"error": message}` for that request; the process keeps serving.
 */
export const POCKETSPHINX_WORKER = String.raw`
import base64, json, sys, time
from pocketsphinx import pocketsphinx as ps

MODEL, MAX_GRAMMARS = sys.argv[1], int(sys.argv[2])

def decoder():
    c = ps.Decoder.default_config()
    c.set_string('-hmm', MODEL + '/en-us')
    c.set_string('-lm', MODEL + '/en-us.lm.bin')
    c.set_string('-dict', MODEL + '/cmudict-en-us.dict')
    c.set_string('-logfn', '/dev/null')
    # Bound the search on audio it cannot match (noise, the telephone band): the default
    # 30000 active HMMs per frame let one utterance take over 30 s on a loaded machine.
    c.set_int('-maxhmmpf', 10000)
    return ps.Decoder(c)

started = time.time()
d = decoder()
grammars = set()
logmath = d.get_logmath()

def decode(raw, search):
    d.set_search(search)
    d.start_utt()
    d.process_raw(raw, False, True)
    d.end_utt()
    h = d.hyp()
    if h is None:
        return {'text': '', 'score': None, 'words': []}
    words = []
    for s in d.seg():
        w = s.word
        if w.startswith('<') or w.startswith('[') or w.startswith('(') or w.startswith('+'):
            continue
        if w.endswith(')') and '(' in w:
            w = w[:w.index('(')]
        words.append([w, s.start_frame, s.end_frame, round(logmath.exp(s.prob), 4), d.lookup_word(w) or ''])
    return {'text': ' '.join(w[0] for w in words), 'score': h.best_score, 'words': words}

def recognize(req):
    global d, grammars, logmath
    raw = base64.b64decode(req['audio'])
    out = {'lm': decode(raw, '_default'), 'grammar': None}
    out['frames'] = d.n_frames()
    g = req.get('grammar')
    if g:
        if g['name'] not in grammars:
            if len(grammars) >= MAX_GRAMMARS:
                d = decoder()
                logmath = d.get_logmath()
                grammars = set()
            d.set_jsgf_string(g['name'], g['jsgf'])
            grammars.add(g['name'])
        out['grammar'] = decode(raw, g['name'])
    return out

def lookup(req):
    return {'phones': {w: d.lookup_word(w) for w in req['words']}}

def reply(msg):
    sys.stdout.write(json.dumps(msg) + '\n')
    sys.stdout.flush()

reply({'ready': True, 'loadMs': round((time.time() - started) * 1000)})
for line in sys.stdin:
    if not line.strip():
        continue
    req = {}
    try:
        req = json.loads(line)
        op = req.get('op')
        res = recognize(req) if op == 'recognize' else lookup(req) if op == 'lookup' else None
        if res is None:
            raise ValueError('unknown op %r' % op)
        res['id'] = req.get('id')
        reply(res)
    except Exception as e:
        reply({'id': req.get('id'), 'error': '%s: %s' % (type(e).__name__, e)})
`;
