import base from './drizzle.config';
export default { ...base, out: "../../tmp/mkt-migrations-516GcL/migrations" };
