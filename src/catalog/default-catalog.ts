// The catalog shipped with the package (data/agents.json), bundled so the core needs no file access.
import document from '../../data/agents.json';
import type { CatalogDocument } from './types.js';

/** The default catalog document, as committed in data/agents.json. */
export const defaultCatalogDocument = document as unknown as CatalogDocument;
