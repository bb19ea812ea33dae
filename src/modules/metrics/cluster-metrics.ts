import cluster from 'node:cluster';
import { AggregatorRegistry, type Registry } from 'prom-client';

/** A worker's request to the primary for every worker's metrics, and the answer. */
const ASK = 'gateway:cluster-metrics';
const ANSWER = 'gateway:cluster-metrics-answer';

interface Answer {
  type: typeof ANSWER;
  id: number;
  text?: string;
  error?: string;
}

/**
 * With WORKERS > 1 the primary accepts connections and hands each to a worker, so
 * `/metrics` lands on any one of them: that worker asks the primary, which collects
 * every worker's registry (prom-client's AggregatorRegistry: counters and histograms
 * summed) and answers with the text. Nothing here runs in a single process.
 */
export function inClusterWorker(): boolean {
  return cluster.isWorker;
}

/** In a worker: the primary's collection reads this registry. */
export function joinClusterMetrics(registry: Registry): void {
  AggregatorRegistry.setRegistries(registry);
  new AggregatorRegistry(); // installs the worker's answer to the primary's collection
}

/**
 * In the primary: answers each worker's ASK with the metrics of all of them. Returns the
 * same collection for the primary's own METRICS_PORT listener.
 */
export function serveClusterMetrics(): () => Promise<string> {
  const aggregator = new AggregatorRegistry();
  cluster.on('message', (worker, message: { type?: string; id?: number }) => {
    if (message?.type !== ASK) return;
    const reply = (answer: Omit<Answer, 'type' | 'id'>) => {
      if (worker.isConnected()) worker.send({ type: ANSWER, id: message.id, ...answer });
    };
    aggregator.clusterMetrics().then(
      (text) => reply({ text }),
      (error: Error) => reply({ error: error.message }),
    );
  });
  return () => aggregator.clusterMetrics();
}

let nextId = 0;
const waiting = new Map<number, { resolve: (text: string) => void; reject: (error: Error) => void }>();

/** In a worker: the Prometheus text of every worker, from the primary. */
export function clusterMetricsText(): Promise<string> {
  if (waiting.size === 0) process.on('message', onAnswer);
  const id = nextId++;
  return new Promise<string>((resolve, reject) => {
    waiting.set(id, { resolve, reject });
    process.send!({ type: ASK, id });
  });
}

function onAnswer(message: Answer): void {
  if (message?.type !== ANSWER) return;
  const request = waiting.get(message.id);
  if (!request) return;
  waiting.delete(message.id);
  if (waiting.size === 0) process.off('message', onAnswer);
  if (message.text !== undefined) request.resolve(message.text);
  else request.reject(new Error(message.error ?? 'no metrics'));
}
