// Section 4: a fresh store loaded with many bases through the API: its size on disk at each quarter (is the
// growth linear?) and the memory of the kb serve process after the load and after list requests.
import { memoryOf } from '../lib/engines.mjs';
import { ApiClient, pool } from '../lib/http.mjs';
import { figure } from '../lib/report.mjs';

const MB = 1e6;
const PER_NAMESPACE = 100;

export async function scaleSection(ctx) {
  const { options, engine, home } = ctx;
  const total = options.scale;
  const namespaces = Math.max(1, Math.ceil(total / PER_NAMESPACE));
  ctx.progress(`scale: a fresh ${engine.name} store`);
  const group = await engine.group('scale', home, options.replicas);
  try {
    const client = new ApiClient(group.urls, group.firstToken);
    await client.get('/auth');
    const startMemory = group.pids.map(memoryOf);
    const empty = await group.storeBytes();
    const steps = [];
    const nsKey = (i) => `scale-ns-${String(i % namespaces).padStart(5, '0')}`;
    let done = 0;
    for (let quarter = 1; quarter <= 4; quarter++) {
      const target = Math.round((total * quarter) / 4);
      const indexes = Array.from({ length: target - done }, (_, i) => done + i);
      ctx.progress(`scale: creating bases ${(done + 1).toLocaleString('en-US')} to ${target.toLocaleString('en-US')}`);
      const started = performance.now();
      // Bases go round the namespaces, so every namespace grows through the load, as real ones would.
      await pool(indexes, 32, (i) =>
        client.post('/base_create', { namespace: nsKey(i), key: `base-${String(i).padStart(7, '0')}`, description: `Base ${i} of the scale test` }),
      );
      const seconds = (performance.now() - started) / 1000;
      const size = await group.storeBytes();
      steps.push({ bases: target, bytes: size.total, data: size.data, parts: size.parts, rate: indexes.length / seconds });
      done = target;
    }
    const afterLoad = group.pids.map(memoryOf);

    ctx.progress('scale: list requests');
    await pool(Array.from({ length: 20 }, (_, i) => i), 4, () => client.get('/ns_list'));
    await pool(Array.from({ length: Math.min(namespaces, 500) }, (_, i) => i), 8, (i) => client.get(`/base_list?namespace=${nsKey(i)}`));
    const afterLists = group.pids.map(memoryOf);
    client.close();

    const perBase = steps.map((step, i) => ({
      ...step,
      cumulative: (step.data - empty.data) / step.bases,
      increment: (step.data - (i === 0 ? empty.data : steps[i - 1].data)) / (step.bases - (i === 0 ? 0 : steps[i - 1].bases)),
    }));
    const last = perBase.at(-1);
    const worst = (list) => Math.max(...list.map((m) => m.rss));
    const label = total.toLocaleString('en-US');
    const replicaNote = options.replicas > 1 ? ' (the largest replica)' : '';
    return {
      title: `4. Scale: ${label} bases in ${namespaces.toLocaleString('en-US')} namespaces on a fresh ${engine.name} store`,
      figures: [
        figure({ name: `store on disk at ${label} bases vs empty`, value: last.bytes / MB, baseline: empty.total / MB, unit: 'MB' }),
        figure({ name: 'data per base: last quarter vs first', value: last.increment, baseline: perBase[0].increment, unit: 'B' }),
        figure({ name: `kb serve RSS after the load vs at start${replicaNote}`, value: worst(afterLoad) / MB, baseline: worst(startMemory) / MB, unit: 'MB', budget: { on: 'value', op: '<', limit: 150 } }),
        figure({ name: `kb serve RSS after list requests vs at start${replicaNote}`, value: worst(afterLists) / MB, baseline: worst(startMemory) / MB, unit: 'MB', budget: { on: 'value', op: '<', limit: 150 } }),
        figure({ name: 'kb serve peak RSS (VmHWM) during the section', value: Math.max(...afterLists.map((m) => m.peak)) / MB, unit: 'MB' }),
      ],
      details: [
        {
          title: 'The store at each quarter (data bytes per base since empty and within the quarter: equal figures mean linear growth)',
          headers: ['bases', 'on disk MB', 'files MB', 'data MB', 'B/base since empty', 'B/base this quarter', 'creates/s'],
          align: ['r', 'r', 'l', 'r', 'r', 'r', 'r'],
          rows: [
            [0, (empty.total / MB).toFixed(2), empty.parts, (empty.data / MB).toFixed(2), '', '', ''],
            ...perBase.map((s) => [s.bases.toLocaleString('en-US'), (s.bytes / MB).toFixed(2), s.parts, (s.data / MB).toFixed(2), Math.round(s.cumulative), Math.round(s.increment), Math.round(s.rate).toLocaleString('en-US')]),
          ],
        },
        {
          title: 'kb serve memory (/proc/PID/status)',
          headers: ['when', ...group.pids.map((pid, i) => `replica ${i + 1} VmRSS MB`), 'VmHWM MB (peak)'],
          align: ['l', ...group.pids.map(() => 'r'), 'r'],
          rows: [
            ['at start (empty store)', ...startMemory.map((m) => (m.rss / MB).toFixed(1)), (Math.max(...startMemory.map((m) => m.peak)) / MB).toFixed(1)],
            [`after ${label} creates`, ...afterLoad.map((m) => (m.rss / MB).toFixed(1)), (Math.max(...afterLoad.map((m) => m.peak)) / MB).toFixed(1)],
            ['after 20 ns_list + base_list requests', ...afterLists.map((m) => (m.rss / MB).toFixed(1)), (Math.max(...afterLists.map((m) => m.peak)) / MB).toFixed(1)],
          ],
        },
      ],
      notes: [
        `Bases created through the API (POST /v1/base_create, 32 at a time, keep-alive), round-robin over the namespaces, each with a description of about 25 characters; on disk is the SQLite file kb.db plus its WAL kb.db-wal (PostgreSQL: pg_database_size); data is SQLite's page_count x page_size as a reader sees it, WAL included, which does not jump when the WAL grows to its checkpoint size and stays there.`,
        `List requests: 20 x ns_list (${namespaces.toLocaleString('en-US')} namespaces) and ${Math.min(namespaces, 500)} x base_list (${PER_NAMESPACE} bases each).`,
      ],
      raw: { empty, steps: perBase, startMemory, afterLoad, afterLists },
    };
  } finally {
    await group.stop();
  }
}
