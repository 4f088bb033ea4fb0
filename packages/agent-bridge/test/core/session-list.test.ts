import { describe, expect, it } from 'vitest';
import { resumePage } from '../../src/core/terminal/session-list.js';

const files = Array.from({ length: 14 }, (_, i) => ({
  sessionId: `s${String(i).padStart(2, '0')}`,
  mtimeMs: i * 1000,
}));

describe('/resume pages', () => {
  it.each([
    [0, 0, ['s13', 's12', 's11', 's10', 's09', 's08']],
    [1, 1, ['s07', 's06', 's05', 's04', 's03', 's02']],
    [2, 2, ['s01', 's00']],
    // Past the end: the last page; before the start: the first.
    [9, 2, ['s01', 's00']],
    [-1, 0, ['s13', 's12', 's11', 's10', 's09', 's08']],
  ])('page %i shows page %i: %j', (asked, shown, ids) => {
    const page = resumePage(files, asked);
    expect(page.page).toBe(shown);
    expect(page.total).toBe(14);
    expect(page.files.map((f) => f.sessionId)).toEqual(ids);
  });

  it('no sessions: an empty first page', () => {
    expect(resumePage([], 3)).toEqual({ page: 0, total: 0, files: [] });
  });
});
