/** What the configurations of jest.config.js's projects and jest.policy-coverage.config.js share. */
module.exports = {
  testEnvironment: 'node',
  rootDir: __dirname,
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    '^.+\\.tsx?$': ['@swc/jest', { jsc: { target: 'es2022' } }],
    // ESM-only dependencies (content-disposition and cookie, through fastify's plugins) become CommonJS for jest's runtime.
    '^.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: ['/node_modules/(?!(content-disposition|cookie)/)'],
};
