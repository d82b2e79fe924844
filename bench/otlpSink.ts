// A loopback OTLP/HTTP receiver for the benchmarks that measure svc with tracing on: it takes every
// export, counts its bytes and answers 200, as a collector would.
import { createServer } from 'node:http';

export interface OtlpSink {
  url: string;
  /** Export requests received and their bytes. */
  received(): { requests: number; bytes: number };
  close(): Promise<void>;
}

export async function startOtlpSink(): Promise<OtlpSink> {
  let requests = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      requests += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    received: () => ({ requests, bytes }),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
