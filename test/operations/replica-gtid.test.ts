import { formatGtidPosition, gtidCovers, gtidEquals, gtidMax, parseGtidPosition } from '../../src/db/gtid';

/** GTID positions as MariaDB writes them (`domain-server-seq`, comma-separated): what covers what. */
const pos = (s: string) => parseGtidPosition(s)!;

test('parses and formats positions; anything else is not one', () => {
  expect(formatGtidPosition(pos('1-2-30, 0-1-7'))).toBe('0-1-7,1-2-30');
  expect(pos('').size).toBe(0);
  expect(formatGtidPosition(pos('0-1-18446744073709551615'))).toBe('0-1-18446744073709551615');
  for (const bad of ['x', '0-1', '0-1-2-3', '0-1-a', '0-1-7,']) expect(parseGtidPosition(bad)).toBeNull();
});

test('a position covers another when it is at least as far in every domain the other names', () => {
  expect(gtidCovers(pos('0-1-7'), pos('0-1-7'))).toBe(true);
  expect(gtidCovers(pos('0-1-8'), pos('0-1-7'))).toBe(true);
  expect(gtidCovers(pos('0-1-6'), pos('0-1-7'))).toBe(false);
  // Another server id in the same domain (after a switchover): the sequence decides.
  expect(gtidCovers(pos('0-2-9'), pos('0-1-7'))).toBe(true);
  expect(gtidCovers(pos('0-1-9'), pos('0-1-7,1-1-1'))).toBe(false);
  expect(gtidCovers(pos('0-1-9,1-1-1'), pos('0-1-7,1-1-1'))).toBe(true);
  expect(gtidCovers(pos(''), pos(''))).toBe(true);
  expect(gtidCovers(pos(''), pos('0-1-1'))).toBe(false);
});

test('the furthest of two positions, domain by domain', () => {
  expect(formatGtidPosition(gtidMax(pos('0-1-7,1-1-3'), pos('0-1-5,1-1-9,2-3-1')))).toBe('0-1-7,1-1-9,2-3-1');
  expect(gtidEquals(pos('0-1-7,1-1-3'), pos('1-1-3,0-1-7'))).toBe(true);
  expect(gtidEquals(pos('0-1-7'), pos('0-1-8'))).toBe(false);
});
