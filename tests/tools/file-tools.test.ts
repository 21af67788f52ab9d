import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Clock } from '../../src/core/clock.js';
import type { FileBackend } from '../../src/deep-agent/tools/files/backend.js';
import { CompositeBackend } from '../../src/deep-agent/tools/files/backends/composite.js';
import { DiskBackend } from '../../src/deep-agent/tools/files/backends/disk.js';
import { MemoryBackend } from '../../src/deep-agent/tools/files/backends/memory.js';
import { MAX_REGEX_LINE_CHARS } from '../../src/deep-agent/tools/files/grep-regex.js';
import { FileToolsState } from '../../src/deep-agent/tools/files/state.js';
import { createFileTools } from '../../src/deep-agent/tools/files/tools.js';
import { callTool, toolError } from './tool-helpers.js';

const base = mkdtempSync(join(tmpdir(), 'taskline-tools-'));
let seq = 0;
afterAll(() => rmSync(base, { recursive: true, force: true }));

const BACKENDS: Array<[string, () => FileBackend]> = [
  ['memory', () => new MemoryBackend()],
  ['disk', () => new DiskBackend({ root: join(base, `disk-${++seq}`) })],
  [
    'composite',
    () =>
      new CompositeBackend({
        default: new MemoryBackend(),
        routes: { '/docs/': new DiskBackend({ root: join(base, `route-${++seq}`) }) },
      }),
  ],
];

const numbered = (n: number, text: string) => `${String(n).padStart(6)}\t${text}`;

describe('file tools: parameters', () => {
  it('use the LangChain deepagents parameter names', () => {
    const tools = createFileTools({ backend: new MemoryBackend() });
    const keys = (schema: unknown) =>
      Object.keys(
        (z.toJSONSchema(schema as z.ZodType) as { properties?: object }).properties ?? {},
      );
    expect(Object.keys(tools)).toEqual([
      'ls',
      'read_file',
      'write_file',
      'edit_file',
      'delete_file',
      'glob',
      'grep',
    ]);
    expect(keys(tools.ls.parameters)).toEqual(['path']);
    expect(keys(tools.read_file.parameters)).toEqual(['file_path', 'offset', 'limit']);
    expect(keys(tools.write_file.parameters)).toEqual(['file_path', 'content']);
    expect(keys(tools.edit_file.parameters)).toEqual([
      'file_path',
      'old_string',
      'new_string',
      'replace_all',
    ]);
    expect(keys(tools.delete_file.parameters)).toEqual(['file_path']);
    expect(keys(tools.glob.parameters)).toEqual(['pattern', 'path']);
    expect(keys(tools.grep.parameters)).toEqual([
      'pattern',
      'path',
      'glob',
      'output_mode',
      'max_count',
      'regex',
    ]);
  });
});

for (const [name, make] of BACKENDS) {
  describe(`read_file format on ${name} (the same answer on every backend)`, () => {
    const path = name === 'composite' ? '/docs/long.txt' : '/long.txt';
    const setup = async () => {
      const backend = make();
      const lines = Array.from({ length: 250 }, (_, i) => `line ${i + 1}`);
      await backend.write(path, lines.join('\n') + '\n');
      await backend.write('/empty.txt', '');
      await backend.write('/crlf.txt', 'one\r\ntwo\r\n');
      return createFileTools({ backend });
    };

    it('numbers lines like cat -n and pages 200 lines with a continuation hint', async () => {
      const tools = await setup();
      const page = String(await callTool(tools.read_file, { file_path: path }));
      const rows = page.split('\n');
      expect(rows[0]).toBe(numbered(1, 'line 1'));
      expect(rows[199]).toBe(numbered(200, 'line 200'));
      expect(rows[200]).toBe('(... 50 more lines; continue with offset=200)');
      expect(rows).toHaveLength(201);
    });

    it('continues from the offset and ends without a hint', async () => {
      const tools = await setup();
      const page = String(await callTool(tools.read_file, { file_path: path, offset: 200 }));
      const rows = page.split('\n');
      expect(rows[0]).toBe(numbered(201, 'line 201'));
      expect(rows[49]).toBe(numbered(250, 'line 250'));
      expect(rows).toHaveLength(50);
    });

    it('honours limit and says where to continue', async () => {
      const tools = await setup();
      const page = await callTool(tools.read_file, { file_path: path, offset: 10, limit: 2 });
      expect(page).toBe(
        `${numbered(11, 'line 11')}\n${numbered(12, 'line 12')}\n(... 238 more lines; continue with offset=12)`,
      );
    });

    it('answers an offset past the end and an empty file with one clear line', async () => {
      const tools = await setup();
      expect(await callTool(tools.read_file, { file_path: path, offset: 250 })).toBe(
        `(offset 250 is past the end of ${path}, which has 250 lines; use an offset from 0 to 249)`,
      );
      expect(await callTool(tools.read_file, { file_path: '/empty.txt' })).toBe(
        '(/empty.txt is empty)',
      );
    });

    it('shows CRLF files without carriage returns', async () => {
      const tools = await setup();
      expect(await callTool(tools.read_file, { file_path: '/crlf.txt' })).toBe(
        `${numbered(1, 'one')}\n${numbered(2, 'two')}`,
      );
    });

    it('gives coded errors for missing files and directories', async () => {
      const tools = await setup();
      expect(await toolError(callTool(tools.read_file, { file_path: '/nope.txt' }))).toBe(
        'not_found: /nope.txt does not exist',
      );
      await callTool(tools.write_file, { file_path: '/dir/x.txt', content: 'x' });
      expect(await toolError(callTool(tools.read_file, { file_path: '/dir' }))).toMatch(
        /^is_directory: \/dir is a directory/,
      );
      expect(await toolError(callTool(tools.read_file, { file_path: '/../x' }))).toMatch(
        /^outside_root: /,
      );
    });
  });
}

describe('read_file limits', () => {
  it('cuts very long lines and stops a page at the size budget', async () => {
    const backend = new MemoryBackend();
    await backend.write('/wide.txt', `${'w'.repeat(50)}\nshort\n`);
    await backend.write('/many.txt', Array.from({ length: 100 }, () => 'x'.repeat(30)).join('\n'));
    const tools = createFileTools({ backend, maxLineChars: 10, largeResultChars: 400 });
    expect(await callTool(tools.read_file, { file_path: '/wide.txt' })).toBe(
      `${numbered(1, 'wwwwwwwwww… [line cut: 50 characters]')}\n${numbered(2, 'short')}`,
    );
    // Each row is 6 + 1 + 30 characters plus a newline: 10 rows fit in 400 characters.
    const paged = createFileTools({ backend, largeResultChars: 400 });
    const page = String(await callTool(paged.read_file, { file_path: '/many.txt' }));
    expect(page.split('\n')).toHaveLength(11);
    expect(page.split('\n').at(-1)).toBe('(... 90 more lines; continue with offset=10)');
  });
});

describe('write_file', () => {
  it('creates files and reports lines and bytes', async () => {
    const backend = new MemoryBackend();
    const tools = createFileTools({ backend });
    expect(
      await callTool(tools.write_file, { file_path: 'notes/todo.md', content: 'a\nb\n' }),
    ).toBe('Created /notes/todo.md (2 lines, 4 bytes).');
    expect(await backend.read('/notes/todo.md')).toBe('a\nb\n');
  });

  it('refuses to overwrite a file it has not read, then replaces it after a read', async () => {
    const backend = new MemoryBackend();
    await backend.write('/a.txt', 'old');
    const tools = createFileTools({ backend });
    expect(
      await toolError(callTool(tools.write_file, { file_path: '/a.txt', content: 'new' })),
    ).toBe('exists: /a.txt already exists; read_file it first to replace it, or use edit_file');
    await callTool(tools.read_file, { file_path: '/a.txt' });
    expect(await callTool(tools.write_file, { file_path: '/a.txt', content: 'new' })).toBe(
      'Replaced /a.txt (1 line, 3 bytes).',
    );
    await backend.write('/a.txt', 'changed by someone else');
    expect(
      await toolError(callTool(tools.write_file, { file_path: '/a.txt', content: 'mine' })),
    ).toMatch(/^read_required: \/a.txt changed since you read it/);
  });

  it('passes backend limits through as coded errors', async () => {
    const tools = createFileTools({ backend: new MemoryBackend({ maxFileBytes: 4 }) });
    expect(
      await toolError(callTool(tools.write_file, { file_path: '/big.txt', content: '12345' })),
    ).toMatch(/^too_large: \/big.txt would be 5 bytes; the limit per file is 4 bytes/);
    expect(
      await toolError(callTool(tools.write_file, { file_path: '/n\u0000.txt', content: 'x' })),
    ).toBe('invalid_path: the path contains a NUL byte; remove it');
  });
});

describe('edit_file', () => {
  async function setup(content = 'alpha\nbeta\nalpha\n') {
    const backend = new MemoryBackend();
    await backend.write('/doc.md', content);
    const state = new FileToolsState();
    return { backend, state, tools: createFileTools({ backend, state }) };
  }

  it('requires the file to have been read in this session', async () => {
    const { tools, state } = await setup();
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'beta', new_string: 'B' }),
      ),
    ).toBe(
      'read_required: /doc.md has not been read in this session; read_file it first, then edit',
    );
    await callTool(tools.read_file, { file_path: '/doc.md', limit: 1 });
    expect(state.readPaths).toEqual(['/doc.md']);
    expect(
      await callTool(tools.edit_file, {
        file_path: '/doc.md',
        old_string: 'beta',
        new_string: 'B',
      }),
    ).toBe('Edited /doc.md: replaced 1 occurrence.');
  });

  it('says no_match, ambiguous_match, and replaces all on request', async () => {
    const { tools, backend } = await setup();
    await callTool(tools.read_file, { file_path: '/doc.md' });
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'gamma', new_string: 'G' }),
      ),
    ).toBe(
      'no_match: old_string was not found in /doc.md; read_file it again and copy the text exactly',
    );
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'alpha', new_string: 'A' }),
      ),
    ).toBe(
      'ambiguous_match: old_string occurs 2 times in /doc.md; add surrounding lines to make it unique, or set replace_all to true',
    );
    expect(
      await callTool(tools.edit_file, {
        file_path: '/doc.md',
        old_string: 'alpha',
        new_string: '$& A',
        replace_all: true,
      }),
    ).toBe('Edited /doc.md: replaced 2 occurrences.');
    expect(await backend.read('/doc.md')).toBe('$& A\nbeta\n$& A\n');
  });

  it('allows successive edits after one read, but not after an outside change', async () => {
    const { tools, backend } = await setup();
    await callTool(tools.read_file, { file_path: '/doc.md' });
    await callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'beta', new_string: 'B' });
    await callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'B', new_string: 'C' });
    await backend.write('/doc.md', 'rewritten');
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'C', new_string: 'D' }),
      ),
    ).toBe('read_required: /doc.md changed since you read it; read_file it again, then edit');
  });

  it('matches multi-line text in CRLF files', async () => {
    const { tools, backend } = await setup('one\r\ntwo\r\nthree\r\n');
    await callTool(tools.read_file, { file_path: '/doc.md' });
    await callTool(tools.edit_file, {
      file_path: '/doc.md',
      old_string: 'one\ntwo',
      new_string: 'uno\ndos',
    });
    expect(await backend.read('/doc.md')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('rejects empty or identical strings and missing files', async () => {
    const { tools } = await setup();
    await callTool(tools.read_file, { file_path: '/doc.md' });
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/doc.md', old_string: '', new_string: 'x' }),
      ),
    ).toMatch(/^invalid_argument: /);
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/doc.md', old_string: 'beta', new_string: 'beta' }),
      ),
    ).toMatch(/^invalid_argument: /);
    expect(
      await toolError(
        callTool(tools.edit_file, { file_path: '/nope.md', old_string: 'a', new_string: 'b' }),
      ),
    ).toBe('not_found: /nope.md does not exist');
  });
});

describe('ls, delete_file and glob', () => {
  it('lists directories with a slash and files with sizes', async () => {
    const backend = new MemoryBackend();
    const tools = createFileTools({ backend });
    await backend.write('/notes/a.md', 'hello');
    await backend.write('/top.txt', 'x');
    expect(await callTool(tools.ls, {})).toBe('/notes/\n/top.txt (1 byte)');
    expect(await callTool(tools.ls, { path: '/notes' })).toBe('/notes/a.md (5 bytes)');
    expect(await toolError(callTool(tools.ls, { path: '/nope' }))).toBe(
      'not_found: /nope does not exist',
    );
    expect(
      await callTool(createFileTools({ backend: new MemoryBackend() }).ls, { path: null }),
    ).toBe('(/ is empty)');
  });

  it('deletes files and forgets that they were read', async () => {
    const backend = new MemoryBackend();
    const state = new FileToolsState();
    const tools = createFileTools({ backend, state });
    await backend.write('/a.txt', 'x');
    await callTool(tools.read_file, { file_path: '/a.txt' });
    expect(await callTool(tools.delete_file, { file_path: '/a.txt' })).toBe('Deleted /a.txt.');
    expect(state.wasRead('/a.txt')).toBe(false);
    expect(await toolError(callTool(tools.delete_file, { file_path: '/a.txt' }))).toBe(
      'not_found: /a.txt does not exist',
    );
  });

  it('globs paths one per line and says when nothing matches', async () => {
    const backend = new MemoryBackend();
    const tools = createFileTools({ backend });
    await backend.write('/a.md', '1');
    await backend.write('/docs/b.md', '2');
    expect(await callTool(tools.glob, { pattern: '**/*.md' })).toBe('/a.md\n/docs/b.md');
    expect(await callTool(tools.glob, { pattern: '*.md', path: '/docs' })).toBe('/docs/b.md');
    expect(await callTool(tools.glob, { pattern: '*.pdf' })).toBe(
      '(no files match "*.pdf" under /)',
    );
    expect(await toolError(callTool(tools.glob, { pattern: '' }))).toMatch(/^invalid_pattern: /);
  });
});

describe('grep', () => {
  async function setup(options: { clock?: Clock; grepMaxCount?: number } = {}) {
    const backend = new MemoryBackend();
    await backend.write('/a.md', 'one needle\ntwo\nneedle three\n');
    await backend.write('/b.txt', 'needle in b\n');
    await backend.write('/c.md', 'nothing\n');
    return createFileTools({ backend, ...options });
  }

  it('lists files with matches by default', async () => {
    const tools = await setup();
    expect(await callTool(tools.grep, { pattern: 'needle' })).toBe('/a.md\n/b.txt');
  });

  it('shows path:line:text in content mode and counts in count mode', async () => {
    const tools = await setup();
    expect(await callTool(tools.grep, { pattern: 'needle', output_mode: 'content' })).toBe(
      '/a.md:1:one needle\n/a.md:3:needle three\n/b.txt:1:needle in b',
    );
    expect(await callTool(tools.grep, { pattern: 'needle', output_mode: 'count' })).toBe(
      '/a.md:2\n/b.txt:1',
    );
    expect(
      await callTool(tools.grep, { pattern: 'needle', glob: '*.md', output_mode: 'content' }),
    ).toBe('/a.md:1:one needle\n/a.md:3:needle three');
  });

  it('is literal unless regex is true, and refuses unsupported regexes with a reason', async () => {
    const tools = await setup();
    expect(await callTool(tools.grep, { pattern: 'ne+dle' })).toBe(
      '(no matches for "ne+dle" under /)',
    );
    expect(await callTool(tools.grep, { pattern: '^ne+dle', regex: true })).toBe('/a.md\n/b.txt');
    // Nested repetitions run on the linear-time engine: an answer, not a hang or a refusal.
    expect(await callTool(tools.grep, { pattern: '(x+x+)+y', regex: true })).toBe(
      '(no matches for "(x+x+)+y" under /)',
    );
    expect(await toolError(callTool(tools.grep, { pattern: '(n)\\1', regex: true }))).toMatch(
      /^invalid_pattern: the regex "\(n\)\\\\1" was refused: backreferences/,
    );
    expect(await toolError(callTool(tools.grep, { pattern: 'a(?=b)', regex: true }))).toMatch(
      /^invalid_pattern: .*lookahead and lookbehind are not supported/,
    );
  });

  it('names the lines a regex skipped as too long, on every backend, with full paths', async () => {
    for (const [kind, make] of BACKENDS) {
      const backend = make();
      const long = `${'x'.repeat(MAX_REGEX_LINE_CHARS)} needle`;
      await backend.write('/docs/min.js', `short needle\n${long}\n`);
      await backend.write('/other.txt', `${long}\n${long}\n${long}\n`);
      const tools = createFileTools({ backend });
      const out = await callTool(tools.grep, {
        pattern: 'ne+dle$',
        regex: true,
        output_mode: 'content',
      });
      expect(out, kind).toBe(
        '/docs/min.js:1:short needle\n' +
          `(4 lines were not searched: longer than the ${MAX_REGEX_LINE_CHARS} characters this ` +
          'regex scans per line (/docs/min.js:2, /other.txt:1, /other.txt:2 and 1 more), so they ' +
          'may also match; search them with a literal pattern or a simpler regex)',
      );
      // A literal search has no line cap.
      expect(await callTool(tools.grep, { pattern: 'needle', output_mode: 'count' }), kind).toBe(
        '/docs/min.js:2\n/other.txt:3',
      );
    }
  });

  it('stops at max_count and says so', async () => {
    const tools = await setup();
    expect(
      await callTool(tools.grep, { pattern: 'needle', max_count: 2, output_mode: 'content' }),
    ).toBe(
      '/a.md:1:one needle\n/a.md:3:needle three\n(stopped at 2 matching lines; narrow the search with path or glob, or raise max_count)',
    );
  });

  it('gives up with timeout when the time budget runs out', async () => {
    const expired: Clock = {
      now: () => 0,
      setTimer: (_ms, fn) => {
        fn();
        return { cancel: () => undefined };
      },
      sleep: async () => undefined,
    };
    const tools = await setup({ clock: expired });
    expect(await toolError(callTool(tools.grep, { pattern: 'needle' }))).toBe(
      'timeout: grep did not finish within 10000 ms; narrow path or glob, or search for more specific text',
    );
  });

  it('stops when the tool call is cancelled', async () => {
    const tools = await setup();
    const controller = new AbortController();
    controller.abort();
    expect(
      await toolError(callTool(tools.grep, { pattern: 'needle' }, { signal: controller.signal })),
    ).toMatch(/^timeout: /);
  });
});

describe('large results', () => {
  async function setup() {
    const backend = new MemoryBackend();
    for (let i = 0; i < 300; i++) {
      await backend.write(`/files/f${String(i).padStart(3, '0')}.md`, `needle ${i}\n`);
    }
    return { backend, tools: createFileTools({ backend, largeResultChars: 2000 }) };
  }

  it('saves a long result to /large_tool_results/<call id> and returns a preview', async () => {
    const { backend, tools } = await setup();
    const out = String(
      await callTool(tools.glob, { pattern: '**/*.md' }, { toolCallId: 'call_42' }),
    );
    expect(out.length).toBeLessThan(2000);
    expect(out.startsWith('/files/f000.md\n')).toBe(true);
    expect(out.endsWith('/files/f299.md')).toBe(true);
    expect(out).toContain(
      'The full result (4499 characters) is saved at /large_tool_results/call_42; read it with read_file',
    );
    const saved = await backend.read('/large_tool_results/call_42');
    expect(saved.split('\n')).toHaveLength(300);
    const page = String(
      await callTool(tools.read_file, {
        file_path: '/large_tool_results/call_42',
        offset: 299,
      }),
    );
    expect(page).toBe(numbered(300, '/files/f299.md'));
  });

  it('uses a safe file name for odd call ids, and keeps short results inline', async () => {
    const { backend, tools } = await setup();
    await callTool(
      tools.grep,
      { pattern: 'needle', output_mode: 'content' },
      { toolCallId: '../x/y' },
    );
    expect(await backend.stat('/large_tool_results/.._x_y')).toMatchObject({ isDir: false });
    expect(await callTool(tools.grep, { pattern: 'needle 7', path: '/files' })).toBe(
      '/files/f007.md\n/files/f070.md\n/files/f071.md\n/files/f072.md\n/files/f073.md\n/files/f074.md\n/files/f075.md\n/files/f076.md\n/files/f077.md\n/files/f078.md\n/files/f079.md',
    );
  });

  it('still previews when the result cannot be saved', async () => {
    const backend = new MemoryBackend({ maxFileBytes: 100 });
    for (let i = 0; i < 100; i++) await backend.write(`/f${i}.md`, 'x');
    const tools = createFileTools({ backend, largeResultChars: 200 });
    const out = String(await callTool(tools.glob, { pattern: '*.md' }, { toolCallId: 'c1' }));
    expect(out).toMatch(/could not be saved \(too_large: .*\); narrow the request/);
  });
});
