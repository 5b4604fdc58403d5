/** @module A page of a listing, by id. */

export interface Page {
  limit: number;
  /** Return items whose id sorts after this one (ids are time-ordered). */
  after?: string;
}
