import { RateProviderError } from './provider-error.js';
import { type EurQuotes, type Quote, QUOTED_CODES, readQuote } from './usd-per-unit.js';

// ECB: <gesmes:Envelope ...><Cube><Cube time='2026-03-13'><Cube currency='USD' rate='1.0812'/>...

const XML_NAME = /[A-Za-z_][A-Za-z0-9_.:-]*/y;
const XML_ATTRIBUTE = /\s+([A-Za-z_][A-Za-z0-9_.:-]*)\s*=\s*(?:"([^"<]*)"|'([^'<]*)')/y;
const XML_TAG_END = /\s*(\/?)>/y;

/**
 * Reads the daily reference-rate file. The XML is checked for well-formed, balanced tags
 * (no DOCTYPE or CDATA: the ECB uses neither, and refusing DOCTYPE keeps entities out);
 * exactly one dated Cube must hold the day's rates.
 */
export function readEcb(text: string): EurQuotes {
  const kind = 'ecb';
  const malformed = (detail: string) => new RateProviderError(kind, 'malformed', detail);
  const stack: { name: string; day?: { date: string; quotes: Map<string, Quote> } }[] = [];
  const days: { date: string; quotes: Map<string, Quote> }[] = [];
  let roots = 0;
  let position = 0;

  while (position < text.length) {
    const open = text.indexOf('<', position);
    if (open === -1) {
      if (text.slice(position).trim() !== '' && stack.length === 0) throw malformed('answer has text outside its root element');
      break;
    }
    if (stack.length === 0 && text.slice(position, open).trim() !== '') throw malformed('answer has text outside its root element');
    position = open;
    if (text.startsWith('<?', position)) {
      const close = text.indexOf('?>', position);
      if (close === -1) throw malformed('answer is not well-formed XML (unclosed <?)');
      position = close + 2;
      continue;
    }
    if (text.startsWith('<!--', position)) {
      const close = text.indexOf('-->', position);
      if (close === -1) throw malformed('answer is not well-formed XML (unclosed comment)');
      position = close + 3;
      continue;
    }
    if (text.startsWith('<!', position)) throw malformed('answer has a DOCTYPE or CDATA section, which the ECB file never has');
    if (text.startsWith('</', position)) {
      XML_NAME.lastIndex = position + 2;
      const name = XML_NAME.exec(text)?.[0];
      const closeAt = XML_NAME.lastIndex;
      XML_TAG_END.lastIndex = closeAt;
      const end = name === undefined ? null : XML_TAG_END.exec(text);
      if (!name || !end || end[1] === '/') throw malformed(`answer is not well-formed XML (bad end tag at ${position})`);
      const top = stack.pop();
      if (!top || top.name !== name) throw malformed(`answer is not well-formed XML (</${name}> does not close ${top ? `<${top.name}>` : 'anything'})`);
      position = XML_TAG_END.lastIndex;
      continue;
    }

    // A start tag or an empty-element tag.
    XML_NAME.lastIndex = position + 1;
    const name = XML_NAME.exec(text)?.[0];
    if (!name) throw malformed(`answer is not well-formed XML (bad tag at ${position})`);
    let cursor = XML_NAME.lastIndex;
    const attributes = new Map<string, string>();
    for (;;) {
      XML_ATTRIBUTE.lastIndex = cursor;
      const attribute = XML_ATTRIBUTE.exec(text);
      if (!attribute) break;
      const attributeName = attribute[1] ?? '';
      if (attributes.has(attributeName)) throw malformed(`answer is not well-formed XML (<${name}> repeats ${attributeName})`);
      attributes.set(attributeName, attribute[2] ?? attribute[3] ?? '');
      cursor = XML_ATTRIBUTE.lastIndex;
    }
    XML_TAG_END.lastIndex = cursor;
    const end = XML_TAG_END.exec(text);
    if (!end) throw malformed(`answer is not well-formed XML (bad tag <${name}> at ${position})`);
    position = XML_TAG_END.lastIndex;
    if (stack.length === 0) {
      roots += 1;
      if (roots > 1) throw malformed('answer is not well-formed XML (more than one root element)');
    }

    const parent = stack[stack.length - 1];
    const element: (typeof stack)[number] = { name };
    if (localName(name) === 'Cube') {
      const time = attributes.get('time');
      const currency = attributes.get('currency');
      if (time !== undefined) {
        element.day = { date: time, quotes: new Map() };
        days.push(element.day);
      } else if (currency !== undefined) {
        const day = parent?.day;
        if (!day) throw malformed(`the ${currency} rate is not inside a dated Cube`);
        const rate = attributes.get('rate');
        if (rate === undefined) throw malformed(`the ${currency} Cube has no rate`);
        if (day.quotes.has(currency)) throw malformed(`the ${currency} rate appears twice`);
        if ((QUOTED_CODES as readonly string[]).includes(currency)) day.quotes.set(currency, readQuote(kind, currency, rate));
      }
    }
    if (end[1] !== '/') stack.push(element);
  }

  if (stack.length > 0) throw malformed(`answer is not well-formed XML (<${stack[stack.length - 1]?.name}> is never closed)`);
  if (roots === 0) throw malformed('answer is not XML');
  const [day, ...more] = days;
  if (!day) throw malformed('answer has no dated Cube');
  if (more.length > 0) throw malformed(`answer holds ${days.length} days; the daily file (eurofxref-daily.xml) holds one`);
  return { date: day.date, eur: { units: 1n, scale: 0 }, quotes: day.quotes };
}

function localName(name: string): string {
  const colon = name.lastIndexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
