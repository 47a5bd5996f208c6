// The error classes that decide exit codes: configuration (2) versus the tool itself (3).
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}
export { UsageError } from './runner/run.js';
