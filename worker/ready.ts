/** The line the worker prints once it polls; `npm start` waits for it before printing the URLs. */
export const workerReadyMarker = 'polling';
