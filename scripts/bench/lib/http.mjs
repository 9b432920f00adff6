// A small keep-alive HTTP client for seeding data through the API, with bounded concurrency.
import http from 'node:http';

export class ApiClient {
  /** `urls`: one base URL per server replica; requests go round-robin. */
  constructor(urls, token, { connections = 32 } = {}) {
    this.urls = urls.map((url) => new URL(url));
    this.token = token;
    this.agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    this.next = 0;
  }

  request(method, path, body) {
    const base = this.urls[this.next++ % this.urls.length];
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = { authorization: `Bearer ${this.token}`, accept: 'application/json' };
    if (payload !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
    return new Promise((resolve, reject) => {
      const request = http.request(
        { host: base.hostname, port: base.port, method, path: `/v1${path}`, headers, agent: this.agent },
        (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let json;
            try {
              json = JSON.parse(text);
            } catch {
              json = undefined;
            }
            if (response.statusCode !== 200) {
              reject(new Error(`${method} /v1${path} answered ${response.statusCode}: ${text.slice(0, 300)}`));
            } else resolve(json?.data);
          });
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(payload);
    });
  }

  get(path) {
    return this.request('GET', path);
  }

  post(path, body) {
    return this.request('POST', path, body);
  }

  close() {
    this.agent.destroy();
  }
}

/** Runs `work(item)` for every item, at most `concurrency` at a time; rejects on the first failure. */
export async function pool(items, concurrency, work) {
  let next = 0;
  let failed;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      const item = items[next++];
      try {
        await work(item);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failed !== undefined) throw failed;
}
