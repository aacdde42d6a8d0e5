/**
 * Reading the items of a JSON list as its text streams in, one item at a time: a bare array, or an
 * object whose `data` member is the array (`{ "success": true, "data": [...] }`). Only the current item's
 * text is held, so memory stays flat whatever the list's length; each item is `JSON.parse`d when the
 * caller asks for it, so a caller that stops early parses nothing more.
 *
 * A focused scanner rather than a general streaming JSON parser: it tracks strings, escapes and nesting
 * depth only to find where each item ends, and leaves the item itself to the runtime's `JSON.parse`
 * (fast, exact, on every runtime). No service field names are known here.
 *
 * @module
 */

/** The list's text is not of a known list shape, or an item is not JSON. `index` names the item, when one. */
export class JsonListError extends Error {
  /** The item at fault (counting from 0), or `undefined` for the list's own shape. */
  readonly index: number | undefined;

  constructor(message: string, index?: number) {
    super(message);
    this.index = index;
  }
}

/** One item found in the list. */
export interface JsonListItem {
  /** Its position in the list, from 0. */
  readonly index: number;
  /** The parsed item. */
  readonly value: unknown;
}

/**
 * Where the scanner is in the list's outer structure. (An object, not an `enum`: Node's type stripping, which runs
 * the sources in the simulation's worker threads, does not accept enums.)
 */
const Phase = {
  Start: 0,
  KeyOrEnd: 1,
  Key: 2,
  Colon: 3,
  MemberValue: 4,
  SkipValue: 5,
  AfterMember: 6,
  FirstItemOrEnd: 7,
  NextItem: 8,
  Item: 9,
  AfterItem: 10,
  End: 11,
} as const;
type Phase = (typeof Phase)[keyof typeof Phase];

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const BOM = 0xfeff;

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;

/**
 * Finds the items of a JSON list in text fed to it piece by piece. `feed` adds text; `next` returns the
 * next complete item, `undefined` when more text is needed, or `null` once the list's array has ended.
 * Whatever follows the array's closing bracket is not read.
 */
export class JsonListScanner {
  /** Text not consumed yet (from the start of the item or member in progress). */
  #text = '';
  /** Scan position in `#text`. */
  #pos = 0;
  #phase: Phase = Phase.Start;
  /** Where the value in progress starts in `#text`. */
  #valueStart = -1;
  /** The start of the value in progress that came in earlier pieces. */
  #carry = '';
  /** True when the last piece ended inside a string with an escape's backslash. */
  #escapeOpen = false;
  /** Nesting depth inside the value in progress. */
  #depth = 0;
  #inString = false;
  #index = 0;
  /** The member name just read, in the outer object. */
  #key = '';
  /** The next backslash in `#text` at or after the last search's start (-1: not searched since the last feed). */
  #backslash = -1;
  readonly #maxItemChars: number;

  /** @param maxItemChars the longest item accepted, in UTF-16 code units: one item is held whole. */
  constructor(maxItemChars: number) {
    this.#maxItemChars = maxItemChars;
  }

  /** True when the list is an object's `data` member rather than a bare array. */
  get inObject(): boolean {
    return this.#inObject;
  }

  #inObject = false;

  /** True once the array's closing bracket was read. */
  get done(): boolean {
    return this.#phase === Phase.End;
  }

  /** Adds the next piece of text. */
  feed(text: string): void {
    if (this.#valueStart >= 0) {
      // A value in progress keeps its start aside, rather than joining it to the new piece: scanning a joined
      // string would first copy it whole, doubling what every piece costs the heap.
      this.#carry += this.#text.slice(this.#valueStart);
      this.#valueStart = 0;
      this.#text = text;
    } else {
      // Outside a value only a member name can be left unscanned (it is read whole).
      this.#text = this.#pos < this.#text.length ? this.#text.slice(this.#pos) + text : text;
    }
    this.#pos = 0;
    this.#backslash = -1;
  }

  /**
   * The next item; `undefined` when the text fed so far ends before it; `null` after the array's end.
   * Items for which `skip` returns true are passed over unparsed.
   * @throws {@link JsonListError} when the text is not a list of a known shape or an item is not JSON.
   */
  next(skip?: (itemText: string) => boolean): JsonListItem | null | undefined {
    const text = this.#text;
    const length = text.length;
    while (this.#pos < length || this.#phase === Phase.End) {
      if (this.#phase === Phase.End) return null;
      if (this.#phase === Phase.Item || this.#phase === Phase.SkipValue) {
        const end = this.#scanValue(text);
        if (end < 0) {
          if (this.#carry.length + this.#pos - this.#valueStart > this.#maxItemChars) throw this.#tooLong();
          return undefined;
        }
        const start = this.#valueStart;
        const carry = this.#carry;
        this.#valueStart = -1;
        this.#carry = '';
        if (this.#phase === Phase.SkipValue) {
          this.#phase = Phase.AfterMember;
          continue;
        }
        this.#phase = Phase.AfterItem;
        const index = this.#index++;
        if (carry.length + end - start > this.#maxItemChars) throw this.#tooLong();
        const itemText = carry === '' ? text.slice(start, end) : carry + text.slice(start, end);
        // A skipped item is counted but never parsed (nor checked to be JSON).
        if (skip?.(itemText)) continue;
        let value: unknown;
        try {
          value = JSON.parse(itemText);
        } catch {
          throw new JsonListError('the item is not JSON', index);
        }
        return { index, value };
      }
      const code = text.charCodeAt(this.#pos);
      if (isSpace(code) || (code === BOM && this.#phase === Phase.Start)) {
        this.#pos++;
        continue;
      }
      switch (this.#phase) {
        case Phase.Start:
          if (code === OPEN_BRACKET) this.#phase = Phase.FirstItemOrEnd;
          else if (code === OPEN_BRACE) {
            this.#phase = Phase.KeyOrEnd;
            this.#inObject = true;
          } else throw new JsonListError('the body is neither a JSON array nor an object with a data array');
          this.#pos++;
          break;
        case Phase.KeyOrEnd:
        case Phase.Key: {
          if (code === CLOSE_BRACE && this.#phase === Phase.KeyOrEnd) throw new JsonListError('the object has no data array');
          if (code !== QUOTE) throw new JsonListError('the body is not JSON');
          // A member name is held whole until its closing quote arrives.
          const close = this.#stringEnd(this.#pos + 1);
          if (close < 0) {
            if (length - this.#pos > this.#maxItemChars) throw new JsonListError('a member name is too long');
            return undefined;
          }
          try {
            this.#key = JSON.parse(text.slice(this.#pos, close + 1)) as string;
          } catch {
            throw new JsonListError('the body is not JSON');
          }
          this.#pos = close + 1;
          this.#phase = Phase.Colon;
          break;
        }
        case Phase.Colon:
          if (code !== COLON) throw new JsonListError('the body is not JSON');
          this.#pos++;
          this.#phase = Phase.MemberValue;
          break;
        case Phase.MemberValue:
          if (this.#key === 'data') {
            if (code !== OPEN_BRACKET) throw new JsonListError('data is not an array');
            this.#pos++;
            this.#phase = Phase.FirstItemOrEnd;
          } else this.#startValue(Phase.SkipValue);
          break;
        case Phase.AfterMember:
          if (code === COMMA) this.#phase = Phase.Key;
          else if (code === CLOSE_BRACE) throw new JsonListError('the object has no data array');
          else throw new JsonListError('the body is not JSON');
          this.#pos++;
          break;
        case Phase.FirstItemOrEnd:
          if (code === CLOSE_BRACKET) {
            this.#pos++;
            this.#phase = Phase.End;
          } else this.#startValue(Phase.Item);
          break;
        case Phase.NextItem:
          if (code === CLOSE_BRACKET) throw new JsonListError('the list ends with a comma', this.#index);
          this.#startValue(Phase.Item);
          break;
        case Phase.AfterItem:
          if (code === COMMA) {
            this.#pos++;
            this.#phase = Phase.NextItem;
          } else if (code === CLOSE_BRACKET) {
            this.#pos++;
            this.#phase = Phase.End;
          } else throw new JsonListError('the item is not followed by a comma or the end of the list', this.#index - 1);
          break;
      }
    }
    return undefined;
  }

  #tooLong(): JsonListError {
    return this.#phase === Phase.Item
      ? new JsonListError(`the item is longer than ${this.#maxItemChars} characters`, this.#index)
      : new JsonListError(`a member before data is longer than ${this.#maxItemChars} characters`);
  }

  /**
   * The index of the quote that closes a string whose text starts at `from`; -1 when the text ends first.
   * Both searches are the runtime's `indexOf`; the next backslash is remembered, so a string without escapes
   * does not search the rest of the piece for one.
   */
  #stringEnd(from: number): number {
    const text = this.#text;
    let pos = from;
    for (;;) {
      const quote = text.indexOf('"', pos);
      if (quote < 0) return -1;
      if (this.#backslash < pos) {
        const found = text.indexOf('\\', pos);
        this.#backslash = found < 0 ? Number.POSITIVE_INFINITY : found;
      }
      if (this.#backslash > quote) return quote;
      // Skip the escape (its second character may be a quote); `\uXXXX` has no quote or backslash after it.
      pos = this.#backslash + 2;
    }
  }

  #startValue(phase: typeof Phase.Item | typeof Phase.SkipValue): void {
    this.#phase = phase;
    this.#valueStart = this.#pos;
    this.#carry = '';
    this.#depth = 0;
    this.#inString = false;
    this.#escapeOpen = false;
  }

  /**
   * Scans the value in progress from `#pos`: returns the index just past its end, or -1 when the text
   * ends first (the state is kept for the next piece).
   */
  #scanValue(text: string): number {
    const length = text.length;
    let pos = this.#pos;
    let depth = this.#depth;
    try {
      for (;;) {
        if (this.#inString) {
          if (this.#escapeOpen) {
            // The escaped character of a backslash that ended the last piece.
            if (pos >= length) return -1;
            pos++;
            this.#escapeOpen = false;
          }
          const close = this.#stringEnd(pos);
          if (close < 0) {
            this.#escapeOpen = endsWithOpenEscape(text, pos);
            pos = length;
            return -1;
          }
          pos = close + 1;
          this.#inString = false;
          if (depth === 0) return pos;
          continue;
        }
        if (pos >= length) return -1;
        const code = text.charCodeAt(pos);
        if (code === QUOTE) {
          this.#inString = true;
          pos++;
        } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
          depth++;
          pos++;
        } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
          // A bracket that closes the list itself ends a bare scalar item.
          if (depth === 0) return pos;
          depth--;
          pos++;
          if (depth === 0) return pos;
        } else if (depth === 0 && (code === COMMA || isSpace(code))) {
          return pos;
        } else pos++;
      }
    } finally {
      this.#pos = pos;
      this.#depth = depth;
    }
  }
}

/** True when `text` (inside a string from `from`, at an escape boundary) ends with a backslash whose escape is open. */
function endsWithOpenEscape(text: string, from: number): boolean {
  let start = text.length;
  while (start > from && text.charCodeAt(start - 1) === BACKSLASH) start--;
  // An even run is complete escapes (`\\\\`); an odd one ends with a backslash whose character is still to come.
  return (text.length - start) % 2 === 1;
}
