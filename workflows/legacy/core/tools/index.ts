export * from './engine-tools';
export * from './grants';
export * from './names';
export * from './types';
export * from './details';
