// Types for the one export of shared-pair.js that TypeScript tests use.
import type { WaitStrategy } from 'testcontainers';

export function answersQueries(rootPassword: string): WaitStrategy;
