export * from './answers-ahead';
export * from './carry';
export * from './plan';
export * from './reduce';
export * from './scope';
export * from './state';
export * from './types';
export * from './view';
