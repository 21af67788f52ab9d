import { describe, expect, it } from 'vitest';
import { FileError } from '../../src/deep-agent/tools/files/backend.js';
import { compileGlob, createPathFilter, splitGlob } from '../../src/deep-agent/tools/files/glob.js';
import { MAX_PATH_LENGTH, normalizePath } from '../../src/deep-agent/tools/files/paths.js';
import { compileSearcher, SearchBudget } from '../../src/deep-agent/tools/files/search.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof FileError) return err.code;
    throw err;
  }
  return 'ok';
}

describe('normalizePath', () => {
  it('canonicalizes', () => {
    expect(normalizePath('a/b')).toBe('/a/b');
    expect(normalizePath('/a//b/./c/../d/')).toBe('/a/b/d');
    expect(normalizePath('/')).toBe('/');
    expect(normalizePath('/a/..')).toBe('/');
    expect(normalizePath('/ spaced name .md')).toBe('/ spaced name .md');
  });

  it('rejects what cannot be a safe virtual path', () => {
    expect(codeOf(() => normalizePath(''))).toBe('invalid_path');
    expect(codeOf(() => normalizePath(42))).toBe('invalid_path');
    expect(codeOf(() => normalizePath('/a\u0000b'))).toBe('invalid_path');
    expect(codeOf(() => normalizePath('/a\tb'))).toBe('invalid_path');
    expect(codeOf(() => normalizePath('a\\b'))).toBe('invalid_path');
    expect(codeOf(() => normalizePath('/'.repeat(MAX_PATH_LENGTH + 1)))).toBe('invalid_path');
    expect(codeOf(() => normalizePath(`/${'é'.repeat(128)}`))).toBe('invalid_path');
    expect(codeOf(() => normalizePath('/..'))).toBe('outside_root');
    expect(codeOf(() => normalizePath('a/../../b'))).toBe('outside_root');
  });
});

describe('glob matcher', () => {
  const m = (pattern: string, path: string) => compileGlob(pattern).matches(path);

  it('handles stars, question marks and globstars', () => {
    expect(m('*.md', 'a.md')).toBe(true);
    expect(m('*.md', 'd/a.md')).toBe(false);
    expect(m('**/*.md', 'a.md')).toBe(true);
    expect(m('**/*.md', 'x/y/z.md')).toBe(true);
    expect(m('a/**/b', 'a/b')).toBe(true);
    expect(m('a/**/b', 'a/x/y/b')).toBe(true);
    expect(m('a/**/b', 'a/xb')).toBe(false);
    expect(m('a/**', 'a/x/y')).toBe(true);
    expect(m('?.txt', 'ab.txt')).toBe(false);
    expect(m('??.txt', 'ab.txt')).toBe(true);
    expect(m('*', '.hidden')).toBe(true);
    expect(m('a**b', 'axxb')).toBe(true);
  });

  it('handles braces, nested braces, classes and escapes', () => {
    expect(m('{a,b/c}.md', 'b/c.md')).toBe(true);
    expect(m('x.{md,{ts,js}}', 'x.js')).toBe(true);
    expect(m('{a}.md', '{a}.md')).toBe(true);
    expect(m('[abc].md', 'b.md')).toBe(true);
    expect(m('[!abc].md', 'b.md')).toBe(false);
    expect(m('[^a-c].md', 'd.md')).toBe(true);
    expect(m('[]x].md', ']. md'.replace(' ', ''))).toBe(true);
    expect(m('\\*.md', '*.md')).toBe(true);
    expect(m('\\*.md', 'a.md')).toBe(false);
    expect(m('[unclosed', '[unclosed')).toBe(true);
    expect(m('🎉?.md', '🎉é.md')).toBe(true);
  });

  it('stays fast on patterns that backtrack in naive matchers', () => {
    const pattern = `${'*a'.repeat(20)}b`;
    const path = 'a'.repeat(200);
    expect(m(pattern, path)).toBe(false);
    expect(m('**/'.repeat(20) + 'x', 'a/'.repeat(100) + 'y')).toBe(false);
  });

  it('caps brace expansion and rejects .. segments', () => {
    expect(codeOf(() => compileGlob('{a,b}'.repeat(9)))).toBe('invalid_pattern');
    expect(codeOf(() => compileGlob('a/../b'))).toBe('invalid_pattern');
    expect(codeOf(() => compileGlob('x'.repeat(2000)))).toBe('invalid_pattern');
  });

  it('moves literal leading segments into the base', () => {
    expect(splitGlob('src/lib/**/*.ts', '/')).toEqual({ base: '/src/lib', pattern: '**/*.ts' });
    expect(splitGlob('/abs/*.md', '/ignored')).toEqual({ base: '/abs', pattern: '*.md' });
    expect(splitGlob('a.txt', '/d')).toEqual({ base: '/d', pattern: 'a.txt' });
    expect(splitGlob('{x,y}/a', '/')).toEqual({ base: '/', pattern: '{x,y}/a' });
  });

  it('filters grep files by base name, relative or absolute path', () => {
    expect(createPathFilter('*.md', '/d')('/d/x/y.md')).toBe(true);
    expect(createPathFilter('x/*.md', '/d')('/d/x/y.md')).toBe(true);
    expect(createPathFilter('x/*.md', '/d')('/e/x/y.md')).toBe(false);
    expect(createPathFilter('/d/**', '/')('/d/x/y.md')).toBe(true);
    expect(createPathFilter(undefined, '/')('/anything')).toBe(true);
  });
});

describe('literal search', () => {
  it('cuts the text of a match on a huge line', async () => {
    const searcher = compileSearcher('needle');
    const hits = await searcher.search('/f', `needle${'y'.repeat(10_000)}`, 10, new SearchBudget());
    expect(hits[0]?.text.length).toBe(2000);
  });

  it('rejects a literal with a line break', () => {
    expect(codeOf(() => compileSearcher('a\nb'))).toBe('invalid_pattern');
  });
});
