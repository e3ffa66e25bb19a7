import { expect } from 'chai';
import { extractLinks, extractText, extractTextItems, getDocumentProxy, getMeta } from 'unpdf';

/**
 * A PDF read back the way a reader's software reads it (unpdf, that is pdf.js): its text, page
 * sizes, links and document info, and from its own bytes the fonts it names and embeds.
 */

export interface ReadPdf {
  pageCount: number;
  /** Each page's MediaBox width and height, in points. */
  pageSizes: { width: number; height: number }[];
  /** All pages' text, every run of white space one space: for checking text reads in order. */
  text: string;
  /** Each page's text, white space collapsed likewise. */
  pageTexts: string[];
  /** Each page's text runs with their position (pdf.js coordinates: y grows upwards). */
  items: { str: string; x: number; y: number; width: number }[][];
  /** The link annotations' targets. */
  links: string[];
  info: Record<string, unknown>;
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

// pdf.js may take over the buffer it is given: each call gets its own copy.
const copy = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes);

export async function readPdf(bytes: Uint8Array): Promise<ReadPdf> {
  expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1'), 'a PDF starts %PDF-').to.equal('%PDF-');
  const proxy = await getDocumentProxy(copy(bytes));
  const pageSizes: ReadPdf['pageSizes'] = [];
  for (let number = 1; number <= proxy.numPages; number += 1) {
    const [x0, y0, x1, y1] = (await proxy.getPage(number)).view as [number, number, number, number];
    pageSizes.push({ width: x1 - x0, height: y1 - y0 });
  }
  const { text: pageTexts } = await extractText(copy(bytes), { mergePages: false });
  const { items } = await extractTextItems(copy(bytes));
  const { links } = await extractLinks(copy(bytes));
  const { info } = await getMeta(copy(bytes));
  return {
    pageCount: proxy.numPages,
    pageSizes,
    text: collapse(pageTexts.join(' ')),
    pageTexts: pageTexts.map(collapse),
    items: items.map((page) => page.map((item) => ({ str: item.str, x: item.x, y: item.y, width: item.width }))),
    links,
    info,
  };
}

export interface PdfFonts {
  /** Every /BaseFont the file names. */
  baseFonts: string[];
  /** How many font descriptors it holds, and how many embedded font programs (FontFile, FontFile2, FontFile3). */
  descriptors: number;
  embeddedPrograms: number;
}

/** The fonts as the file's own dictionaries state them (they are never inside compressed streams). */
export function pdfFonts(bytes: Uint8Array): PdfFonts {
  const raw = Buffer.from(bytes).toString('latin1');
  return {
    baseFonts: [...raw.matchAll(/\/BaseFont\s*\/([^\s/<>[\]()]+)/g)].map((match) => match[1]!),
    descriptors: [...raw.matchAll(/\/Type\s*\/FontDescriptor\b/g)].length,
    embeddedPrograms: [...raw.matchAll(/\/FontFile[23]?\s+\d+\s+0\s+R/g)].length,
  };
}

/** The 14 fonts a PDF reader supplies itself, which a PDF may name without embedding. */
export const STANDARD_14_FONTS = [
  'Courier',
  'Courier-Bold',
  'Courier-BoldOblique',
  'Courier-Oblique',
  'Helvetica',
  'Helvetica-Bold',
  'Helvetica-BoldOblique',
  'Helvetica-Oblique',
  'Symbol',
  'Times-Bold',
  'Times-BoldItalic',
  'Times-Italic',
  'Times-Roman',
  'ZapfDingbats',
] as const;

/** Every font the PDF uses is a subset of DejaVu Sans embedded in it; none is left to the reader. */
export function expectEmbeddedFontsOnly(bytes: Uint8Array): void {
  const fonts = pdfFonts(bytes);
  expect(fonts.baseFonts.length, 'the PDF names its fonts').to.be.greaterThan(0);
  for (const name of fonts.baseFonts) {
    expect(name, 'a subset (six-letter tag) of DejaVu Sans').to.match(/^[A-Z]{6}\+DejaVuSans(-Bold)?$/);
    expect(STANDARD_14_FONTS as readonly string[]).to.not.include(name.replace(/^[A-Z]{6}\+/, ''));
  }
  expect(fonts.descriptors, 'font descriptors').to.be.greaterThan(0);
  expect(fonts.embeddedPrograms, 'one embedded font program per descriptor').to.equal(fonts.descriptors);
}
