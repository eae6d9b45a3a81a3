// The in-memory visit store runs the shared VisitStore contract suite.
import { createMemoryVisitStore } from '../../src/index.js';
import { describeVisitStore } from './store-suite.js';

describeVisitStore('memory', async () => ({ store: createMemoryVisitStore(), close: async () => {} }));
