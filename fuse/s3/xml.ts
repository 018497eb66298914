// The XML S3 answers with, read into a tree of elements: just enough of XML 1.0 for S3's replies,
// and strict about the rest. Pure: no I/O.
//
// What it refuses, so a hostile or broken server gets an error instead of a wrong answer:
// a document type declaration (the only way to define entities, and with them the "billion
// laughs" expansion), any entity but the five predefined ones and character references, a
// reference to a character XML cannot hold (U+0000, surrogates, past U+10FFFF), a tag closed by
// another name, a document cut short, anything but comments and white space after the root,
// nesting deeper than S3 ever nests, and a document larger than the largest listing page.
// Names are matched by their local part: `<s3:Key>` is `Key`, and namespace declarations are not
// checked, as the AWS SDK does not check them either.

export interface XmlElement {
  /** The local name: `Key` for `<Key>` and `<s3:Key>`. */
  readonly name: string;
  readonly children: XmlElement[];
  /** The element's own text (not its children's), entities decoded, CDATA kept as it is. */
  text: string;
}

export class XmlError extends Error {
  constructor(message: string) {
    super(`malformed XML in the answer: ${message}`);
    this.name = 'XmlError';
  }
}

export const XML_LIMITS = {
  /** A page of 1000 keys of 1024 bytes each, escaped, with their sizes and ETags, is under 8 MiB. */
  maxChars: 16 * 2 ** 20,
  /** S3's replies nest four levels; this leaves room for what a server adds. */
  maxDepth: 32,
} as const;

const PREDEFINED: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const NAME = /^[A-Za-z_][\w.:-]*$/;

function decodeReference(ref: string): string {
  const named = PREDEFINED[ref];
  if (named !== undefined) return named;
  const m = /^#(?:x([0-9a-fA-F]{1,6})|([0-9]{1,7}))$/.exec(ref);
  if (!m) throw new XmlError(`unknown entity &${ref.slice(0, 40)};`);
  const cp = m[1] !== undefined ? parseInt(m[1], 16) : Number(m[2]);
  if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    throw new XmlError(`character reference &${ref}; names no character XML can hold`);
  return String.fromCodePoint(cp);
}

/** Text between tags with its references decoded. */
export function decodeText(raw: string): string {
  if (!raw.includes('&')) return raw;
  let out = '';
  let at = 0;
  for (let amp = raw.indexOf('&'); amp >= 0; amp = raw.indexOf('&', at)) {
    const semi = raw.indexOf(';', amp);
    if (semi < 0 || semi - amp > 12) throw new XmlError('an & that starts no reference');
    out += raw.slice(at, amp) + decodeReference(raw.slice(amp + 1, semi));
    at = semi + 1;
  }
  return out + raw.slice(at);
}

const localName = (qname: string): string => qname.slice(qname.lastIndexOf(':') + 1);

/** Parses `<name attr="v" ...>` (without the brackets): the name, and whether it closes itself. */
function openTag(inner: string): { qname: string; empty: boolean } {
  const empty = inner.endsWith('/');
  const body = empty ? inner.slice(0, -1) : inner;
  const qname = /^[^\s/>]+/.exec(body)?.[0] ?? '';
  if (!NAME.test(qname)) throw new XmlError(`tag name ${JSON.stringify(qname.slice(0, 40))}`);
  const attrs = body.slice(qname.length);
  if (!/^(?:\s+[A-Za-z_][\w.:-]*\s*=\s*(?:"[^"<]*"|'[^'<]*'))*\s*$/.test(attrs))
    throw new XmlError(`attributes of <${qname.slice(0, 40)}>`);
  return { qname, empty };
}

/** Where the markup starting at `at` (a `<`) ends, past its closing `>`. */
function skipMarkup(text: string, at: number, open: string, close: string): number {
  const end = text.indexOf(close, at + open.length);
  if (end < 0) throw new XmlError(`${open} that is never closed`);
  return end + close.length;
}

export function parseXml(text: string): XmlElement {
  if (text.length > XML_LIMITS.maxChars) throw new XmlError(`longer than ${XML_LIMITS.maxChars} characters`);
  const stack: { qname: string; el: XmlElement }[] = [];
  let root: XmlElement | undefined;
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (at < text.length) {
    const lt = text.indexOf('<', at);
    const raw = text.slice(at, lt < 0 ? text.length : lt);
    const top = stack.at(-1);
    if (top) top.el.text += decodeText(raw);
    else if (raw.trim() !== '') throw new XmlError('text outside the root element');
    if (lt < 0) break;
    if (text.startsWith('<!--', lt)) at = skipMarkup(text, lt, '<!--', '-->');
    else if (text.startsWith('<?', lt)) at = skipMarkup(text, lt, '<?', '?>');
    else if (text.startsWith('<![CDATA[', lt)) {
      at = skipMarkup(text, lt, '<![CDATA[', ']]>');
      if (!top) throw new XmlError('CDATA outside the root element');
      top.el.text += text.slice(lt + 9, at - 3);
    } else if (text.startsWith('<!', lt)) throw new XmlError('a document type declaration');
    else {
      const gt = text.indexOf('>', lt);
      if (gt < 0) throw new XmlError('a tag cut short');
      const inner = text.slice(lt + 1, gt);
      at = gt + 1;
      if (inner.startsWith('/')) {
        const qname = inner.slice(1).trim();
        if (!top || top.qname !== qname)
          throw new XmlError(`</${qname.slice(0, 40)}> closes ${top ? `<${top.qname.slice(0, 40)}>` : 'nothing'}`);
        stack.pop();
        continue;
      }
      if (!top && root) throw new XmlError('a second root element');
      const { qname, empty } = openTag(inner);
      const el: XmlElement = { name: localName(qname), children: [], text: '' };
      if (top) top.el.children.push(el);
      else root = el;
      if (!empty) stack.push({ qname, el });
      if (stack.length > XML_LIMITS.maxDepth) throw new XmlError(`nested deeper than ${XML_LIMITS.maxDepth}`);
    }
  }
  if (stack.length > 0) throw new XmlError(`cut short inside <${stack.at(-1)!.qname.slice(0, 40)}>`);
  if (!root) throw new XmlError('no root element');
  return root;
}

export const childrenNamed = (el: XmlElement, name: string): XmlElement[] =>
  el.children.filter((c) => c.name === name);

/** The text of the first child called `name`, or undefined when there is none. */
export const childText = (el: XmlElement, name: string): string | undefined =>
  el.children.find((c) => c.name === name)?.text;

/** Text for an element's content: the five characters XML reserves, and line ends kept as such. */
export function escapeText(s: string): string {
  return s.replace(/[&<>"'\r\n\u0085\u2028]/g, (c) => `&#x${c.charCodeAt(0).toString(16).toUpperCase()};`);
}
