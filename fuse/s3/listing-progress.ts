// A listing read page by page must move on. A store that hands back a continuation token (or
// upload markers) it gave before would otherwise be asked for the same pages forever, the pages
// piling up in memory: the repeat is a broken listing, an error at once, as the AWS SDK's
// paginators stop on a repeated token and `estuary stage` refuses one. Pure: no I/O.

import { createHash } from 'node:crypto';
import { ObjectError } from './object-client.ts';

/**
 * Pages one listing may take. At S3's 1000 keys a page that is 10^8 entries, more than a listing
 * held in memory can hold; a store that pages on past it with ever-new tokens is looping too.
 */
export const MAX_LISTING_PAGES = 100_000;

export class ListingProgress {
  readonly #seen = new Set<string>();
  readonly #about: string;

  /** `about`: what is listed, for the error (a prefix). */
  constructor(about: string) {
    this.#about = about;
  }

  /** Takes the cursor the next page starts from; throws if the listing gave it before. */
  next(cursor: string): string {
    const id = createHash('sha256').update(cursor).digest('base64');
    if (this.#seen.has(id))
      throw new ObjectError('other', `the store handed back a continuation token it gave before (listing ${JSON.stringify(this.#about)} would loop)`, this.#about);
    if (this.#seen.size >= MAX_LISTING_PAGES)
      throw new ObjectError('other', `listing ${JSON.stringify(this.#about)} goes on past ${MAX_LISTING_PAGES} pages`, this.#about);
    this.#seen.add(id);
    return cursor;
  }
}
