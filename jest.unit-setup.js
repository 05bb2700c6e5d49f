/** The unit project runs without the Temporal dev server: whatever the global setup of a run handed out is taken away. */
const { serverVariables } = require('./jest.projects');

for (const name of serverVariables) delete process.env[name];
