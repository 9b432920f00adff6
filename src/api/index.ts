export * from './errors.js';
export * from './routes.js';
export * from './schemas.js';
export * from './validation.js';
