export * from './define.js';
export * as parsers from './parsers/index.js';
export * from './policy.js';
export * from './prebuilt.js';
export * from './typed-task.js';
