// The PostgreSQL baseline of the replicas section: CLIENTS connections, each doing one INSERT per commit (autocommit)
// into a table shaped like kb's bases (a unique key per parent, a bytea description) for SECONDS, as a plain `pg`
// program would. Prints one JSON line: {"inserts":N,"seconds":S}. Usage: node pg-inserts.mjs URL CLIENTS SECONDS
import pg from 'pg';

const [url, clients, seconds] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const setup = new pg.Client({ connectionString: url });
await setup.connect();
await setup.query(`CREATE TABLE IF NOT EXISTS bench_inserts (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, parent bigint NOT NULL, key text COLLATE "C" NOT NULL,
  description bytea, created_at timestamptz NOT NULL, UNIQUE (parent, key))`);
await setup.end();

const run = `${process.pid}`;
let inserts = 0;
const started = performance.now();
const deadline = started + seconds * 1000;
await Promise.all(
  Array.from({ length: clients }, async (_, client) => {
    const connection = new pg.Client({ connectionString: url });
    await connection.connect();
    for (let n = 0; performance.now() < deadline; n++) {
      await connection.query({
        name: 'insert',
        text: 'INSERT INTO bench_inserts (parent, key, description, created_at) VALUES ($1, $2, $3, now())',
        values: [1, `p${run}-${client}-${n}`, Buffer.from('Created by the benchmark')],
      });
      inserts++;
    }
    await connection.end();
  }),
);
process.stdout.write(`${JSON.stringify({ inserts, seconds: (performance.now() - started) / 1000 })}\n`);
