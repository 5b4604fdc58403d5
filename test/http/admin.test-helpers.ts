/** The admin API with an admin token: test/calls.ts's `admin`, on an app (inject) or a port or URL (fetch). */
export { admin } from '../calls.js';
