import { isIP } from 'node:net';

/**
 * Reads DAYBOOK_TRUST_PROXY: `off` (or empty) for none, else addresses, CIDR ranges and the
 * word `loopback`, separated by commas or spaces. Returns the entries as written, checked.
 */
export function parseTrustList(raw: string): string[] {
  const entries = raw.split(/[\s,]+/).filter((entry) => entry !== '');
  if (entries.length === 1 && entries[0] === 'off') return [];
  for (const entry of entries) {
    const problem = entryProblem(entry);
    if (problem) throw new Error(`"${entry}" ${problem}; give addresses, CIDR ranges (10.0.0.0/8, fd00::/8) or loopback, separated by commas, or off`);
  }
  return entries;
}

function entryProblem(entry: string): string | null {
  if (entry === 'loopback') return null;
  const [address = '', bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return 'is not an address or a CIDR range';
  if (bits === undefined) return null;
  const max = family === 4 ? 32 : 128;
  if (!/^[0-9]{1,3}$/.test(bits) || Number(bits) > max) return `has a prefix length outside 0 to ${max}`;
  return null;
}
