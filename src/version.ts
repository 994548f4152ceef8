/** Kept in step with package.json (a unit test checks it). */
export const LIBRARY_VERSION = "0.1.0";
